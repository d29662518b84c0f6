// A host's hooks on a run: every evaluation as it happens, a stop request from the host, and the
// run's notes in the host's own log. The stopped run's directory resumes where it stopped.
#include <cstdio>
#include <dprl/algos/run/experiment.hpp>
#include <dprl/engine/config.hpp>
#include <filesystem>
#include <stop_token>
#include <string>

int main() {
  const auto out = std::filesystem::temp_directory_path() / "dprl_embed_run_hooks";
  std::filesystem::remove_all(out);
  const dprl::Node config = dprl::parse_yaml(
      "seed: 3\n"
      "out: " +
          out.string() +
          "\n"
          "env: {id: taxi}\n"
          "algo: {id: q_learning}\n"
          "train: {steps: 20000, eval_every: 5000, eval_episodes: 5, checkpoint_every: 3000}\n",
      "inline");
  std::stop_source stop;
  dprl::algos::RunOptions opts;
  opts.progress = dprl::Progress::Mode::kOff;
  opts.stop = stop.get_token();
  opts.on_eval = [&](const dprl::algos::EvalReport& r) {
    std::printf("%s %lld: return %.2f\n", r.step_column.c_str(), static_cast<long long>(r.step),
                r.stats.return_mean);
    if (r.step >= 10000) stop.request_stop();  // the host decides it has seen enough
  };
  opts.log = [](std::string_view line) {
    std::printf("log: %.*s\n", static_cast<int>(line.size()), line.data());
  };
  try {
    dprl::algos::run_experiment(config, "hooks", opts);
    return 1;  // the stop was not honoured
  } catch (const dprl::algos::RunStopped& e) {
    std::printf("stopped at step %lld\n", static_cast<long long>(e.step()));
  }
  opts.stop = {};
  opts.resume = true;  // continue from the checkpoint the stop left
  const dprl::RunSummary s = dprl::algos::run_experiment(config, "hooks", opts);
  std::printf("finished: %lld env steps, return %.2f\n", static_cast<long long>(s.env_steps),
              s.final_eval.return_mean);
  std::filesystem::remove_all(out);
  return s.env_steps == 20000 ? 0 : 1;
}
