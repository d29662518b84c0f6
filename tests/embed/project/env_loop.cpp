// An env by id with typed parameters, stepped with random actions for 1000 steps; every episode is
// reset with its own seed derived from the run's root seed, as the engine's own loops do.
#include <cstdint>
#include <cstdio>
#include <dprl/engine/rng.hpp>
#include <dprl/envs/cartpole.hpp>
#include <dprl/envs/register_envs.hpp>
#include <vector>

int main() {
  const std::uint64_t root = 123;
  // CartPole-v0's preset (200 steps), then the fields set here; the class is the concrete one
  auto env = dprl::envs::make_env<dprl::envs::CartPole>("CartPole-v0", {.force_mag = 12.0});
  std::vector<float> obs(env->obs_dim());  // a buffer of another size is refused (dprl::Error)
  dprl::Rng rng(dprl::derive_seed(root, dprl::Domain::kAlgo, 0));
  std::uint64_t episode = 0;
  env->reset(dprl::derive_seed(root, dprl::Domain::kEnvReset, 0, episode), obs);
  double total = 0;
  for (int t = 0; t < 1000; ++t) {
    const dprl::StepResult r = env->step(env->spec().action.sample_index(rng), obs);
    total += r.reward;
    if (r.terminated || r.truncated) {
      ++episode;
      env->reset(dprl::derive_seed(root, dprl::Domain::kEnvReset, 0, episode), obs);
    }
  }
  std::printf("env loop: return %.0f over %llu finished episodes\n", total,
              static_cast<unsigned long long>(episode));
  return total == 1000 && episode > 10 && env->spec().max_episode_steps == 200 ? 0 : 1;
}
