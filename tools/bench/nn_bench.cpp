// Network kernels on issue 5's workload: MLP 4-256-256-2 (ReLU), MSE, one thread.
//   BM_Mlp_AdamStep      forward + backward + Adam update (batch 256)
//   BM_Mlp_DpSgdStep     the same with per-example clipping (C = 1) and Gaussian noise (sigma = 1)
//   BM_Mlp_PerSampleNorms forward + per-example errors + per-example gradient norms
//   BM_Mlp_Forward1      batch-1 forward (acting)
//
//   build-nn/dprl_bench --benchmark_filter='BM_Mlp_' --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <vector>

#include "engine/nn/nn_dp.hpp"
#include "engine/nn/nn_timing.hpp"
#include "engine/rng.hpp"

namespace {

void BM_Mlp_AdamStep(benchmark::State& state) {
  dprl::nn::StepBench b({4, 256, 256, 2}, static_cast<int>(state.range(0)));
  for (auto _ : state) b.adam_step();
}
BENCHMARK(BM_Mlp_AdamStep)->ArgName("batch")->Arg(256)->Unit(benchmark::kMicrosecond);

void BM_Mlp_DpSgdStep(benchmark::State& state) {
  dprl::nn::StepBench b({4, 256, 256, 2}, static_cast<int>(state.range(0)));
  for (auto _ : state) b.dpsgd_step();
}
BENCHMARK(BM_Mlp_DpSgdStep)->ArgName("batch")->Arg(256)->Unit(benchmark::kMicrosecond);

void BM_Mlp_PerSampleNorms(benchmark::State& state) {
  dprl::nn::StepBench b({4, 256, 256, 2}, static_cast<int>(state.range(0)));
  for (auto _ : state) b.per_sample_norms();
}
BENCHMARK(BM_Mlp_PerSampleNorms)->ArgName("batch")->Arg(256)->Unit(benchmark::kMicrosecond);

void BM_Mlp_Forward1(benchmark::State& state) {
  dprl::nn::StepBench b({4, 256, 256, 2}, 1);
  for (auto _ : state) b.forward1();
}
BENCHMARK(BM_Mlp_Forward1)->Unit(benchmark::kMicrosecond);

void BM_Mlp_Forward1_64(benchmark::State& state) {
  dprl::nn::StepBench b({4, 64, 64, 2}, 1);
  for (auto _ : state) b.forward1();
}
BENCHMARK(BM_Mlp_Forward1_64)->Unit(benchmark::kMicrosecond);

}  // namespace

namespace {

// The DP noise alone: 67,586 standard normals (the 4-256-256-2 parameter count).
void BM_Nn_FillStandardNormal(benchmark::State& state) {
  dprl::Rng rng(dprl::derive_seed(0, dprl::Domain::kBench, 3));
  std::vector<float> out(67586);
  for (auto _ : state) {
    dprl::nn::fill_standard_normal(rng, out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_Nn_FillStandardNormal)->Unit(benchmark::kMicrosecond);

}  // namespace
