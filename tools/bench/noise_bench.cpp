// Gaussian noise kernels of the private releases: the table-based discrete Gaussian and the exact
// sampler it replaces, on ChaCha20 (OS-entropy) bits, and the bits alone.
// Run: build/dprl_bench --benchmark_filter=Noise --benchmark_repetitions=5
//      --benchmark_report_aggregates_only=true   (medians; see docs/benchmarks.md)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "privacy/chacha20.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/secure_release.hpp"
#include "privacy/table_gaussian.hpp"

namespace pv = dprl::privacy;

namespace {

// the offline CQL network's release: 69,136 values at noise multiplier 1 (width 2^21 grid steps)
constexpr std::size_t kValues = 69136;

void BM_Noise_TableRelease(benchmark::State& state) {
  auto noise = pv::make_os_entropy_noise(true);
  const pv::SecurePlan plan = pv::gaussian_release_plan(1.0, 1.0, kValues, true);
  std::vector<double> x(kValues, 0.25);
  for (auto _ : state) {
    pv::add_gaussian_release(x, plan.scale, plan.grid, *noise);
    benchmark::DoNotOptimize(x.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kValues));
}
BENCHMARK(BM_Noise_TableRelease)->Unit(benchmark::kMicrosecond);

void BM_Noise_ExactRelease(benchmark::State& state) {
  auto noise = pv::make_os_entropy_noise(true);
  const pv::SecurePlan plan = pv::gaussian_release_plan(1.0, 1.0, kValues, true);
  std::vector<double> x(kValues / 16, 0.25);
  for (auto _ : state) {
    pv::secure_gaussian_release_exact(x, plan.scale, plan.grid, *noise);
    benchmark::DoNotOptimize(x.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(x.size()));
}
BENCHMARK(BM_Noise_ExactRelease)->Unit(benchmark::kMicrosecond);

void BM_Noise_SeededRelease(benchmark::State& state) {
  auto noise = pv::make_seeded_noise(0, 0);
  std::vector<double> x(kValues, 0.25);
  for (auto _ : state) {
    pv::add_gaussian_release(x, 1.0, 0.0, *noise);
    benchmark::DoNotOptimize(x.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kValues));
}
BENCHMARK(BM_Noise_SeededRelease)->Unit(benchmark::kMicrosecond);

// the bits alone: one 64-bit ChaCha20 word per value (what the table sampler reads at width 2^21)
void BM_Noise_ChachaWords(benchmark::State& state) {
  auto noise = pv::make_os_entropy_noise(true);
  std::vector<std::uint64_t> w(kValues);
  for (auto _ : state) {
    noise->fill_u64(w);
    benchmark::DoNotOptimize(w.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kValues));
}
BENCHMARK(BM_Noise_ChachaWords)->Unit(benchmark::kMicrosecond);

// the seeded source's bulk bits: ChaCha8Rand words, one per value (its box tests read one each)
void BM_Noise_Chacha8RandWords(benchmark::State& state) {
  pv::Chacha8Rand rng({1, 2, 3, 4, 5, 6, 7, 8});
  std::vector<std::uint64_t> w(kValues);
  for (auto _ : state) {
    for (std::size_t i = 0; i < w.size();) {
      const auto got = rng.take(w.size() - i);
      std::copy(got.begin(), got.end(), w.begin() + static_cast<std::ptrdiff_t>(i));
      i += got.size();
    }
    benchmark::DoNotOptimize(w.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kValues));
}
BENCHMARK(BM_Noise_Chacha8RandWords)->Unit(benchmark::kMicrosecond);

}  // namespace
