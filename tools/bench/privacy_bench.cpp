// Privacy accounting kernels: RDP epsilon, calibration, PLD composition.
// Run: build/dprl_bench --benchmark_filter=Privacy --benchmark_repetitions=5
//      --benchmark_report_aggregates_only=true   (report the medians; see docs/privacy.md)
#include <benchmark/benchmark.h>

#include "privacy/calibration.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/pld_accountant.hpp"
#include "privacy/rdp_accountant.hpp"

namespace pv = dprl::privacy;

// RDP epsilon of T = 100000 DP-SGD steps (all 156 orders, CKS conversion).
static void BM_Privacy_RdpEpsilon_T100000(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(pv::rdp_dpsgd_epsilon(
        {.noise_multiplier = 1.1, .sampling_rate = 256.0 / 60000, .steps = 100000}, 1e-5));
  }
}
BENCHMARK(BM_Privacy_RdpEpsilon_T100000)->Unit(benchmark::kMicrosecond);

// Smallest z with epsilon <= 2 for q = 0.01, T = 10000, delta = 1e-5 (bisection to 1e-10).
static void BM_Privacy_CalibrateRdp(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(pv::calibrate_noise_multiplier(
        {.target_epsilon = 2.0, .delta = 1e-5, .sampling_rate = 0.01, .steps = 10000}, "rdp"));
  }
}
BENCHMARK(BM_Privacy_CalibrateRdp)->Unit(benchmark::kMillisecond);

// PLD epsilon at value_discretization_interval 1e-4 for T = 10000 steps; arg 0: the hardest
// PriMORL case (z = 0.25, q = 1e-3: dp_accounting 3.5 s here), arg 1: z = 0.8, q = 0.01.
static void BM_Privacy_PldEpsilon_T10000(benchmark::State& state) {
  const double z = state.range(0) == 0 ? 0.25 : 0.8;
  const double q = state.range(0) == 0 ? 1e-3 : 0.01;
  for (auto _ : state) {
    pv::PldAccountant acc(1e-4);
    acc.compose(pv::dpsgd_event({.noise_multiplier = z, .sampling_rate = q, .steps = 10000}));
    benchmark::DoNotOptimize(acc.epsilon(1e-5));
  }
}
// process CPU time: the add direction runs on a second thread
BENCHMARK(BM_Privacy_PldEpsilon_T10000)
    ->Arg(0)
    ->Arg(1)
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);
