// Per-step kernels of the paper-001 actor-critic on MDP-100 (100 states, 2 actions: 200 actor
// weights), the inner loop of the Table 1 grid (docs/benchmarks.md):
//   BM_Noise_AddGaussian/n     the seeded bulk sampler, n normals a call (200: a DP-Actor step)
//   BM_Noise_Xoshiro/n         n raw xoshiro256** draws: the floor of a sampler on that stream
//   BM_GtdActorCritic_Step/dp  act + env step + update on MDP-100; dp 0 none, 1 actor, 2 both
// Steps use the mdp100.yaml step sizes (alpha_v 0.01, alpha_w 0.5, alpha_u 0.5, lambda 0.8);
// episodes restart from a derived seed on termination or truncation, as in training.
//
//   dprl_bench --benchmark_filter='BM_(Noise|GtdActorCritic)_' --benchmark_repetitions=10
//              --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "algos/actor_critic/actor_critic.hpp"
#include "algos/actor_critic/features.hpp"
#include "algos/actor_critic/gtd_learner.hpp"
#include "engine/rng.hpp"
#include "envs/chain_mdp.hpp"
#include "privacy/noise_source.hpp"

namespace {

using dprl::derive_seed;
using dprl::Domain;
using dprl::Rng;

void BM_Noise_AddGaussian(benchmark::State& state) {
  auto noise = dprl::privacy::make_seeded_noise(derive_seed(0, Domain::kBench, 2));
  std::vector<double> x(static_cast<std::size_t>(state.range(0)), 0.0);
  for (auto _ : state) {
    noise->add_gaussian(x, 0.5);
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Noise_AddGaussian)->Arg(200)->Arg(4096);

void BM_Noise_Xoshiro(benchmark::State& state) {
  Rng rng(derive_seed(0, Domain::kBench, 3));
  std::vector<std::uint64_t> x(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    for (auto& v : x) v = rng.next_u64();
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Noise_Xoshiro)->Arg(200);

void BM_GtdActorCritic_Step(benchmark::State& state) {
  dprl::algos::ActorCriticParams p;  // mdp100.yaml step sizes are the defaults
  const int dp = static_cast<int>(state.range(0));
  dprl::envs::ChainMdp env;
  const auto& spec = env.spec();
  auto features = dprl::algos::make_feature_map("one_hot", spec.observation, spec.action);
  const bool actor = dp >= 1, critic = dp >= 2;
  const double sigma = dp ? dprl::algos::ActorCritic::paper_sigma(p.epsilon, p.delta) : 0.0;
  auto noise = dprl::privacy::make_seeded_noise(derive_seed(0, Domain::kBench, 4));
  dprl::algos::GtdActorCriticLearner l(p, *features, static_cast<int>(spec.action.n), actor, critic,
                                       sigma, dp ? noise.get() : nullptr);
  std::vector<float> obs(1), next(1);
  Rng rng(derive_seed(0, Domain::kBench, 5));
  std::uint64_t episode = 0;
  env.reset(derive_seed(0, Domain::kEnvReset, 0, episode), obs);
  l.begin_episode();
  for (auto _ : state) {
    const auto [a, rho] = l.act(obs, rng);
    const auto r = env.step(a, next);
    l.update(obs, a, rho, r.reward, r.terminated, next);
    std::swap(obs, next);
    if (r.terminated || r.truncated) {
      env.reset(derive_seed(0, Domain::kEnvReset, 0, ++episode), obs);
      l.begin_episode();
    }
  }
  benchmark::DoNotOptimize(l.u.data());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GtdActorCritic_Step)->Arg(0)->Arg(1)->Arg(2);

}  // namespace
