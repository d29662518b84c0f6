// Fuzz target: experiment and sweep YAML with --set overrides. The input is a YAML text,
// optionally followed by a line "#--set" and one override (key.path=value) per line. The text is
// resolved as an experiment (env and learner built and validated, nothing trained) and, written
// as a sweep file beside a fixed base experiment, planned as a sweep.
#include <sstream>

#include "algos/run/experiment.hpp"
#include "algos/run/sweep.hpp"
#include "engine/config.hpp"
#include "engine/error.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dprl;
  const std::string input = fuzz::as_string(data, size);
  const auto cut = input.find("\n#--set\n");
  const std::string yaml = input.substr(0, cut);
  try {
    Node config = parse_yaml(yaml, "fuzz.yaml");
    if (cut != std::string::npos) {
      std::istringstream lines(input.substr(cut + 8));
      for (std::string line; std::getline(lines, line);) apply_override(config, line, "--set");
    }
    algos::RunOptions opts;
    opts.out = fuzz::scratch() / "never_written";
    algos::resolve_experiment(config, "fuzz", opts);
  } catch (const Error& e) {
    fuzz::refused(e);
  }
  try {
    fuzz::put("base.yaml",
              "seed: 1\nenv: {id: taxi}\nalgo: {id: q_learning}\ntrain: {steps: 100}\n");
    algos::plan_sweep(fuzz::put("sweep.yaml", yaml));
  } catch (const Error& e) {
    fuzz::refused(e);
  }
  return 0;
}
