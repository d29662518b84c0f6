// Paper 000 kernels: the prefix count of DataRelease (PrefixCounter::extend, O(m) per prefix step)
// and the greedy actions of a panel of network experts (NetExperts::greedy, one batched forward per
// expert), at the paper's m = 3000 experts.
// Run: build/dprl_bench --benchmark_filter=ExpertLevel --benchmark_repetitions=5
//      --benchmark_report_aggregates_only=true   (medians; docs/benchmarks.md, paper 000)
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "algos/expert_level/expert_queries.hpp"
#include "engine/nn/nn_mlp.hpp"
#include "engine/rng.hpp"

namespace {

using dprl::Rng;
namespace algos = dprl::algos;

// One prefix step: m experts' greedy actions (random in [0, |A|)) against a logged action; arg:
// m. The prefix restarts every 200 steps (the CartPole and Acrobot cap).
void BM_ExpertLevel_PrefixCountExtend(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0));
  constexpr int kActions = 2, kLength = 200;
  Rng rng(7);
  std::vector<std::vector<std::int32_t>> greedy(kLength, std::vector<std::int32_t>(m));
  for (auto& g : greedy)
    for (auto& a : g) a = static_cast<std::int32_t>(rng.next_u64() % kActions);
  algos::PrefixCounter counter(m, kActions, 0.02, kLength);
  int k = 0;
  for (auto _ : state) {
    if (k == kLength) {
      counter.reset();
      k = 0;
    }
    benchmark::DoNotOptimize(counter.extend(greedy[k], 0));
    ++k;
  }
  state.SetItemsProcessed(state.iterations() * m);  // expert factors per second
}
BENCHMARK(BM_ExpertLevel_PrefixCountExtend)->Arg(1000)->Arg(3000);

// Greedy actions of m (64, 64) tanh experts (4 inputs, 2 actions) at a batch of 25 states (one
// prefix step of the T = 25 trajectories the release examines in lockstep), one thread.
void BM_ExpertLevel_GreedyPanel(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0));
  constexpr int kBatch = 25;
  std::vector<algos::NetExperts::Expert> experts(m);
  for (int i = 0; i < m; ++i) {
    experts[i].actor = dprl::nn::Mlp(dprl::nn::MlpShape({4, 64, 64, 2}, dprl::nn::Act::kTanh));
    Rng r(static_cast<std::uint64_t>(i) + 1);
    dprl::nn::init_orthogonal(experts[i].actor.shape(), experts[i].actor.data(), r, std::sqrt(2.0),
                              1.0);
  }
  algos::NetExperts panel(std::move(experts), 2, 1);
  Rng rng(9);
  std::vector<float> obs(4 * kBatch);
  for (auto& x : obs) x = static_cast<float>(rng.normal());
  std::vector<std::int32_t> out(static_cast<std::size_t>(m) * kBatch);
  for (auto _ : state) {
    panel.greedy(obs.data(), kBatch, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * m * kBatch);  // expert-state evaluations
}
BENCHMARK(BM_ExpertLevel_GreedyPanel)->Arg(3000)->Unit(benchmark::kMillisecond);

}  // namespace
