// MuJoCo env step cost against raw MuJoCo on the same model: HalfCheetah's step (frame_skip 5)
// must cost at most 10% more than five bare mj_step calls; DMC cartpole's step against one mj_step
// plus the mj_kinematics its observation needs. Each pair draws the same uniformly random
// controls from the same stream and resets (mj_resetData plus the env's reset noise) every 1000
// steps. The raw loops call MuJoCo directly: this file is a MuJoCo source.
//
//   build-mujoco/dprl_bench --benchmark_filter='BM_(HalfCheetah|DmcCartpole)_' --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <mujoco/mujoco.h>

#include <cstdint>
#include <vector>

#include "engine/env.hpp"
#include "engine/rng.hpp"
#include "envs/dmc_cartpole.hpp"
#include "envs/half_cheetah.hpp"
#include "envs/mujoco_util.hpp"

namespace {

using dprl::derive_seed;
using dprl::Domain;
using dprl::Rng;
using dprl::StepResult;
namespace mj = dprl::envs::mj;

constexpr int kEpisodeSteps = 1000;

// the env through its concrete (final) type, as the vector loop calls it
template <class E>
void env_step_loop(benchmark::State& state) {
  E env;
  std::vector<float> obs(env.obs_dim());
  std::vector<double> act(env.spec().action.dim());
  Rng rng(derive_seed(0, Domain::kBench, 1));
  std::uint64_t episode = 0;
  env.reset(derive_seed(0, Domain::kEnvReset, 0, episode), obs);
  double total = 0;
  for (auto _ : state) {
    for (double& a : act) a = rng.uniform(-1.0, 1.0);
    const StepResult r = env.step(act, obs);
    total += r.reward;
    if (r.truncated) env.reset(derive_seed(0, Domain::kEnvReset, 0, ++episode), obs);
  }
  benchmark::DoNotOptimize(total);
}

// raw MuJoCo on the env's built-in model: ctrl = random, n_steps mj_step (+ mj_kinematics)
void raw_step_loop(benchmark::State& state, std::string_view xml, int n_steps, bool kinematics) {
  mj::ModelPtr model = mj::load_model_from_text("bench model", xml);
  mj::DataPtr data = mj::make_data(model.get());
  const mjModel* m = model.get();
  mjData* d = data.get();
  Rng rng(derive_seed(0, Domain::kBench, 1));
  Rng reset_rng(0);
  std::uint64_t episode = 0;
  int t = 0;
  double total = 0;
  for (auto _ : state) {
    for (int i = 0; i < m->nu; ++i) d->ctrl[i] = rng.uniform(-1.0, 1.0);
    for (int k = 0; k < n_steps; ++k) mj_step(m, d);
    if (kinematics) mj_kinematics(m, d);
    total += d->qpos[0];
    if (++t == kEpisodeSteps) {
      t = 0;
      reset_rng.seed_with(derive_seed(0, Domain::kEnvReset, 0, ++episode));
      mj_resetData(m, d);
      for (int i = 0; i < m->nq; ++i) d->qpos[i] = reset_rng.uniform(-0.1, 0.1);
      for (int i = 0; i < m->nv; ++i) d->qvel[i] = 0.1 * reset_rng.normal();
      mj_forward(m, d);
    }
  }
  benchmark::DoNotOptimize(total);
}

void BM_HalfCheetah_Step(benchmark::State& state) { env_step_loop<dprl::envs::HalfCheetah>(state); }
void BM_HalfCheetah_RawMjStep5(benchmark::State& state) {
  raw_step_loop(state, dprl::envs::HalfCheetah::builtin_xml(), 5, false);
}
void BM_DmcCartpole_Step(benchmark::State& state) { env_step_loop<dprl::envs::DmcCartpole>(state); }
void BM_DmcCartpole_RawMjStep(benchmark::State& state) {
  raw_step_loop(state, dprl::envs::DmcCartpole::builtin_xml(), 1, true);
}

}  // namespace

BENCHMARK(BM_HalfCheetah_Step);
BENCHMARK(BM_HalfCheetah_RawMjStep5);
BENCHMARK(BM_DmcCartpole_Step);
BENCHMARK(BM_DmcCartpole_RawMjStep);
