// Single-thread env step throughput: uniformly random actions, auto-reset included, each loop
// templated on the concrete (final) env type so step is a direct call, as in the vector loop.
// BM_CartPole_BareLoop is the baseline: CartPole's equations in a bare loop (random actions,
// termination check, reset draws) with no env object, no observation buffer and no step counter.
//
//   dprl_bench --benchmark_filter='BM_(CartPole|Acrobot|Pendulum|Taxi|ChainMdp)_'
//              --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "engine/env.hpp"
#include "engine/rng.hpp"
#include "envs/acrobot.hpp"
#include "envs/cartpole.hpp"
#include "envs/chain_mdp.hpp"
#include "envs/pendulum.hpp"
#include "envs/register_envs.hpp"
#include "envs/taxi.hpp"

namespace {

using dprl::derive_seed;
using dprl::Domain;
using dprl::Rng;
using dprl::StepResult;

// Discrete envs: action = below(n); the reset seed of each episode is derived, never added.
template <class E>
void discrete_step_loop(benchmark::State& state, const typename E::Params& params) {
  E env(params);
  std::vector<float> obs(env.obs_dim());
  const auto n = static_cast<std::uint64_t>(env.spec().action.n);
  Rng rng(derive_seed(0, Domain::kBench, 1));
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

void BM_CartPole_Step(benchmark::State& state) {
  discrete_step_loop<dprl::envs::CartPole>(state, {});
}
void BM_Acrobot_Step(benchmark::State& state) {
  discrete_step_loop<dprl::envs::Acrobot>(state, {});
}
void BM_Taxi_Step(benchmark::State& state) { discrete_step_loop<dprl::envs::Taxi>(state, {}); }
void BM_ChainMdp_Step(benchmark::State& state) {
  discrete_step_loop<dprl::envs::ChainMdp>(state, {});
}

// Pendulum: torque ~ U(-2, 2) through the generic continuous step(span).
void BM_Pendulum_Step(benchmark::State& state) {
  dprl::envs::Pendulum env;
  std::vector<float> obs(env.obs_dim());
  Rng rng(derive_seed(0, Domain::kBench, 1));
  std::uint64_t episode = 0;
  env.reset(derive_seed(0, Domain::kEnvReset, 0, episode), obs);
  double total = 0;
  double u[1];
  for (auto _ : state) {
    u[0] = rng.uniform(-2.0, 2.0);
    const StepResult r = env.step(std::span<const double>(u, 1), obs);
    total += r.reward;
    if (r.terminated || r.truncated)
      env.reset(derive_seed(0, Domain::kEnvReset, 0, ++episode), obs);
  }
  benchmark::DoNotOptimize(total);
}

// The same CartPole loop through the Env interface (virtual calls), for comparison.
void BM_CartPole_StepVirtual(benchmark::State& state) {
  auto env = dprl::envs::make_env("cartpole");
  std::vector<float> obs(env->obs_dim());
  Rng rng(derive_seed(0, Domain::kBench, 1));
  std::uint64_t episode = 0;
  env->reset(derive_seed(0, Domain::kEnvReset, 0, episode), obs);
  double total = 0;
  for (auto _ : state) {
    const StepResult r = env->step(static_cast<std::int64_t>(rng.below(2)), obs);
    total += r.reward;
    if (r.terminated || r.truncated)
      env->reset(derive_seed(0, Domain::kEnvReset, 0, ++episode), obs);
  }
  benchmark::DoNotOptimize(total);
}

// CartPole's Euler step written out in a bare loop: the floor the env is measured against.
void BM_CartPole_BareLoop(benchmark::State& state) {
  constexpr double gravity = 9.8, masspole = 0.1, total_mass = 1.1, length = 0.5;
  constexpr double polemass_length = 0.05, force_mag = 10.0, tau = 0.02;
  constexpr double x_threshold = 2.4, theta_threshold = 12 * 2 * std::numbers::pi / 360;
  Rng rng(derive_seed(0, Domain::kBench, 1));
  double x = rng.uniform(-0.05, 0.05), x_dot = rng.uniform(-0.05, 0.05);
  double theta = rng.uniform(-0.05, 0.05), theta_dot = rng.uniform(-0.05, 0.05);
  double total = 0;
  for (auto _ : state) {
    const double force = rng.below(2) == 1 ? force_mag : -force_mag;
    const double costheta = std::cos(theta);
    const double sintheta = std::sin(theta);
    const double temp = (force + polemass_length * (theta_dot * theta_dot) * sintheta) / total_mass;
    const double thetaacc = (gravity * sintheta - costheta * temp) /
                            (length * (4.0 / 3.0 - masspole * (costheta * costheta) / total_mass));
    const double xacc = temp - polemass_length * thetaacc * costheta / total_mass;
    x = x + tau * x_dot;
    x_dot = x_dot + tau * xacc;
    theta = theta + tau * theta_dot;
    theta_dot = theta_dot + tau * thetaacc;
    total += 1.0;
    if (x < -x_threshold || x > x_threshold || theta < -theta_threshold ||
        theta > theta_threshold) {
      x = rng.uniform(-0.05, 0.05);
      x_dot = rng.uniform(-0.05, 0.05);
      theta = rng.uniform(-0.05, 0.05);
      theta_dot = rng.uniform(-0.05, 0.05);
    }
  }
  benchmark::DoNotOptimize(total);
  benchmark::DoNotOptimize(x);
}

}  // namespace

BENCHMARK(BM_CartPole_BareLoop);
BENCHMARK(BM_CartPole_Step);
BENCHMARK(BM_CartPole_StepVirtual);
BENCHMARK(BM_Acrobot_Step);
BENCHMARK(BM_Pendulum_Step);
BENCHMARK(BM_Taxi_Step);
BENCHMARK(BM_ChainMdp_Step);

// Weak, so that a shared benchmark main elsewhere in tools/bench takes precedence.
__attribute__((weak)) int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
