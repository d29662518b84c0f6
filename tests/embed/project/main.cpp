// Creates envs by name from the installed library, steps them, and trains a tiny Q-learner.
#include <cstdio>
#include <vector>

#include "algos/experiment.hpp"
#include "engine/config.hpp"
#include "envs/register_envs.hpp"

int main() {
  auto env = dprl::envs::make_env("CartPole-v1", {{"gravity", {"9.81", "main.cpp"}}});
  std::vector<float> obs(env->obs_dim());
  env->reset(42, obs);
  int steps = 0;
  for (;; ++steps) {
    const auto r = env->step(std::int64_t{steps % 2}, obs);
    if (r.terminated || r.truncated) break;
  }
  if (steps < 1) return 1;

  // the same experiment machinery the CLI uses, without writing a run directory
  auto config = dprl::parse_yaml(
      "seed: 3\nenv: {id: taxi}\nalgo: {id: q_learning, params: {learning_rate: 0.5}}\n"
      "train: {steps: 20000, eval_every: 0, eval_episodes: 5}\n",
      "inline");
  dprl::algos::RunOptions opts;
  opts.write = false;
  opts.progress = dprl::Progress::Mode::kOff;
  const auto summary = dprl::algos::run_experiment(config, "embed", opts);
  std::printf("cartpole steps %d, taxi return %.2f\n", steps, summary.final_eval.return_mean);
  return summary.env_steps == 20000 ? 0 : 1;
}
