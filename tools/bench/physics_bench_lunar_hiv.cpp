// Step throughput of lunar_lander (Box2D 2.4) and hiv (Dormand-Prince on the Adams et al. ODE),
// single thread, each loop on the concrete (final) env type. Random actions come from a derived
// stream, episodes auto-reset with derived seeds. Figures and commands: docs/envs_lunar_hiv.md.
//
//   build/dprl_bench --benchmark_filter='BM_(LunarLander|Hiv)' --benchmark_repetitions=10
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <vector>

#include "engine/env.hpp"
#include "engine/rng.hpp"
#include "envs/hiv.hpp"
#include "envs/lunar_lander.hpp"
#include "envs/lunar_lander_heuristic.hpp"

namespace {

using dprl::derive_seed;
using dprl::Domain;
using dprl::Rng;
using dprl::StepResult;
using dprl::envs::Hiv;
using dprl::envs::LunarLander;

template <class E>
void random_discrete_loop(benchmark::State& state, const typename E::Params& params) {
  E env(params);
  std::vector<float> obs(env.obs_dim());
  const auto n = static_cast<std::uint64_t>(env.spec().action.n);
  Rng rng(derive_seed(0, Domain::kBench, 2));
  std::uint64_t episode = 0;
  env.reset(derive_seed(0, Domain::kEnvReset, 0, episode), obs);
  double total = 0;
  for (auto _ : state) {
    const StepResult r = env.step(static_cast<std::int64_t>(rng.below(n)), obs);
    total += r.reward;
    if (r.terminated || r.truncated)
      env.reset(derive_seed(0, Domain::kEnvReset, 0, ++episode), obs);
  }
  benchmark::DoNotOptimize(total);
  state.counters["episodes"] = static_cast<double>(episode);
}

// random discrete actions: crashes within ~100 steps, so resets (world rebuilds) are included
void BM_LunarLander_Step(benchmark::State& state) { random_discrete_loop<LunarLander>(state, {}); }

// the heuristic flies whole episodes (mostly landings): the in-flight and contact step cost
void BM_LunarLander_HeuristicStep(benchmark::State& state) {
  LunarLander env;
  dprl::envs::LunarLanderHeuristic policy;
  std::vector<float> obs(env.obs_dim());
  std::uint64_t episode = 0;
  env.reset(derive_seed(0, Domain::kEnvReset, 0, episode), obs);
  double total = 0;
  for (auto _ : state) {
    const StepResult r = env.step(policy.act_discrete(obs, {}), obs);
    total += r.reward;
    if (r.terminated || r.truncated)
      env.reset(derive_seed(0, Domain::kEnvReset, 0, ++episode), obs);
  }
  benchmark::DoNotOptimize(total);
  state.counters["episodes"] = static_cast<double>(episode);
}

void BM_LunarLanderContinuous_Step(benchmark::State& state) {
  LunarLander env({.continuous = true});
  std::vector<float> obs(env.obs_dim());
  Rng rng(derive_seed(0, Domain::kBench, 2));
  std::uint64_t episode = 0;
  env.reset(derive_seed(0, Domain::kEnvReset, 0, episode), obs);
  double total = 0;
  double a[2];
  for (auto _ : state) {
    a[0] = rng.uniform(-1.0, 1.0);
    a[1] = rng.uniform(-1.0, 1.0);
    const StepResult r = env.step(std::span<const double>(a, 2), obs);
    total += r.reward;
    if (r.terminated || r.truncated)
      env.reset(derive_seed(0, Domain::kEnvReset, 0, ++episode), obs);
  }
  benchmark::DoNotOptimize(total);
}

// reset alone: a new Box2D world, terrain, lander, legs, joints and the no-op step
void BM_LunarLander_Reset(benchmark::State& state) {
  LunarLander env;
  std::vector<float> obs(env.obs_dim());
  std::uint64_t episode = 0;
  for (auto _ : state) env.reset(derive_seed(0, Domain::kEnvReset, 0, ++episode), obs);
  benchmark::DoNotOptimize(obs.data());
}

// set_state of a recipe with range(0) steps: rebuild plus re-simulation
void BM_LunarLander_SetState(benchmark::State& state) {
  LunarLander env;
  std::vector<float> obs(env.obs_dim());
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<double> recipe = {0, 12345, static_cast<double>(n)};
  Rng rng(derive_seed(0, Domain::kBench, 3));
  for (std::size_t i = 0; i < n; ++i) recipe.push_back(static_cast<double>(rng.below(4)));
  env.reset(0, obs);
  for (auto _ : state) env.set_state(recipe);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * (n + 1)));
}

// hiv: the paper's 20-day steps and rlpy's 5-day steps (never terminates; 50 / 200-step episodes)
void BM_Hiv_Step(benchmark::State& state) { random_discrete_loop<Hiv>(state, {}); }
void BM_HivRlpy_Step(benchmark::State& state) {
  random_discrete_loop<Hiv>(state, {.days_per_step = 5, .max_episode_steps = 200});
}

// one right-hand-side evaluation
void BM_Hiv_Rhs(benchmark::State& state) {
  std::array<double, 6> s = Hiv::kUnhealthy, ds{};
  for (auto _ : state) {
    benchmark::DoNotOptimize(s);
    dprl::envs::hiv_rhs(0.7, 0.3, s, ds);
    benchmark::DoNotOptimize(ds);
  }
}

}  // namespace

BENCHMARK(BM_LunarLander_Step);
BENCHMARK(BM_LunarLander_HeuristicStep);
BENCHMARK(BM_LunarLanderContinuous_Step);
BENCHMARK(BM_LunarLander_Reset);
BENCHMARK(BM_LunarLander_SetState)->Arg(100)->Arg(1000);
BENCHMARK(BM_Hiv_Step);
BENCHMARK(BM_HivRlpy_Step);
BENCHMARK(BM_Hiv_Rhs);
