// An experiment from a YAML text through the same runner the command line uses, without writing
// a run directory; the summary comes back as a struct.
#include <cstdio>
#include <dprl/algos/run/experiment.hpp>
#include <dprl/engine/config.hpp>

int main() {
  const dprl::Node config = dprl::parse_yaml(
      "seed: 3\n"
      "env: {id: taxi}\n"
      "algo: {id: q_learning, params: {learning_rate: 0.5}}\n"
      "train: {steps: 20000, eval_every: 0, eval_episodes: 5}\n",
      "inline");
  dprl::algos::RunOptions opts;
  opts.write = false;  // or opts.out = "runs/taxi" to keep the run directory
  opts.progress = dprl::Progress::Mode::kOff;
  const dprl::RunSummary summary = dprl::algos::run_experiment(config, "embedded", opts);
  std::printf("experiment: %lld env steps, return %.2f\n",
              static_cast<long long>(summary.env_steps), summary.final_eval.return_mean);
  return summary.env_steps == 20000 ? 0 : 1;
}
