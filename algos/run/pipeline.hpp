// The expert-level DP offline RL pipeline of Sharma, Vinod, Thakurta, Agarwal, Balle, Dann,
// Raghuveer, "Preserving Expert-Level Privacy in Offline Reinforcement Learning" (TMLR): expert
// population -> DataRelease (Alg. 2) -> selective DP-SGD (Alg. 3), as stages that meet in files.
//
// Config (`dprl run FILE`; a file is a pipeline when it has the key `pipeline: expert_level`):
//   pipeline: expert_level
//   name: cartpole_cql_eps10          # default: the file's stem
//   seed: 1                           # --seed overrides
//   out: runs/paper000/cartpole/cell  # --out overrides
//   population: cartpole.yaml         # a population file (relative to this file) or an inline
//                                     # map (algos/run/population.hpp); shared by cells
//   experts: 1000                     # optional: a uniformly random subset of m experts (all their
//                                     # trajectories, ids renumbered 0..m-1), drawn from the seed
//                                     # (paper Fig. 4); default: every expert of the population
//   mode: selective                   # selective (Alg. 2 + Alg. 3) | dp_sgd (the expert-level
//                                     # DP-SGD baseline, Alg. 4 on all data) | non_private
//   privacy:
//     epsilon: 10                     # total budget
//     delta: auto                     # auto: 1/(10 m) (m = experts the selection keeps);
//                                     # an explicit delta >= 1/m is warned on stderr (below)
//     epsilon1_fraction: 0.75         # eps1 = fraction * eps (paper default 3/4); eps2 = the rest
//     delta1_fraction: 0.9            # delta1 = fraction * delta (9/10); delta2 = the rest
//     epsilon1: ...                   # or explicit parts (then eps1 + eps2 <= eps and
//     epsilon2: ...                   #  delta1 + delta2 <= delta are checked)
//     delta1: ...
//     delta2: ...
//     noise: os-entropy               # or seeded (reproducible, not formal; warned): the
//                                     # release's and the DP-SGD part's noise, both drawn as the
//                                     # other private learners do (algos/core/private_noise.hpp)
//   release: {trajectories: 25, max_length: 200, calibration: paper, source: policies}
//                                     # T, L (public cap); source policies: the examined
//                                     # trajectories are fresh rollouts of the experts' policies
//                                     # with secret (OS-entropy) randomness, the model the proof
//                                     # covers (formal); recorded: the fixed demonstrations as
//                                     # in the paper's Alg. 2 (formal: false; data_release.hpp)
//   selective: {p: 0.8, noise_multiplier: 80, accounting: sound, accountant: pld,
//               clip_norm: 1, max_iterations: 1e9}
//                                     # calibrate_steps: N sets noise_multiplier to the value that
//                                     # spends (eps2, delta2) in N accounted steps (sound: noisy
//                                     # steps at q = b/m; paper: iterations at p b/m)
//   learner: {id: discrete_cql, params: {learning_rate: 1e-4, batch_size: 128}}
//   train: {stable_steps: 20000, eval_every: 10000, eval_episodes: 10, eval_max_steps: 1000}
//   audit: {canaries: 1000, white_box: true}   # optional: after training, a one-run audit of
//                                     # the DP-SGD part against epsilon2 (selective_audit.hpp);
//                                     # writes audit.json and summary.json "audit"
// Default delta: 1/(10 m). (0, delta)-DP admits a mechanism that publishes each expert's whole
// data independently with probability delta, exposing m delta experts on average: 1 at the
// paper's 1/m, 0.1 at 1/(10 m). Beyond that the cost of a smaller delta is logarithmic (the
// release's threshold shift and the DP-SGD accountant grow with ln(1/delta)).
// Stages and files:
//   <population.out>/                 experts and demonstrations (reused by content hash)
//   <out>/release/                    stable/ (Minari) and release.json (sizes, the record and the
//                                     stable prefix lengths in the order of stable/); nothing in
//                                     them names an expert, a recorded episode or a seed (each
//                                     prefix's user_id is its position in stable/); D_unst is
//                                     rebuilt from the demonstrations, never stored (recorded
//                                     source: the per-demonstration lengths it needs live with
//                                     the private data, <population.out>/release_private/);
//                                     reused when its digest matches: a finished release is
//                                     never redrawn
//   <out>/pipeline_ledger.json        every draw on this directory's data (each release drawn,
//                                     each train stage run), charged before it runs
//                                     (pipeline_ledger.hpp); a new draw that would take the
//                                     composed total past (epsilon, delta) is refused
//   <out>/                            config.yaml, metrics.csv, summary.json, policy.bin,
//                                     privacy_ledger.json, run.json (complete run: reused),
//                                     timing.json (wall seconds per stage, the train stage's CPU
//                                     seconds: the only file whose bytes vary)
// summary.json "privacy" is the whole pipeline's record: epsilon and delta = the basic composition
// (Thm. 5.6) of every draw in pipeline_ledger.json (one run: eps1 + eps2 spent, delta1 +
// delta2), unit expert, add/remove one expert (its policy and all of its trajectories), each
// part's own record under details.parts and the ledger's charges under details.ledger. formal
// needs OS-entropy noise, sound accounting, the policies source and no training audit (an audit
// trains on the protected data again, uncharged: algos/audit/audit_report.hpp). extra holds m, the
// stable set's size, the iteration counts and random_return (a uniform policy on the same
// evaluation episodes, for the normalised score (R - R_random) / (R_nonprivate - R_random)). Every
// input is checked before any stage runs or any directory is created.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "algos/expert_level/data_release.hpp"
#include "algos/expert_level/selective_dp_sgd.hpp"
#include "algos/run/experiment.hpp"
#include "algos/run/population.hpp"
#include "engine/config.hpp"
#include "engine/run_dir.hpp"

namespace dprl::algos {

// privacy.delta: auto = kAutoDeltaFactor / m.
inline constexpr double kAutoDeltaFactor = 0.1;

struct PipelineSpec {
  std::string name;
  std::uint64_t seed = 0;
  std::filesystem::path out;
  PopulationSpec population;
  std::int64_t experts = 0;  // m: the experts used (the population's, or a subset of them)
  std::string mode = "selective";
  double epsilon = 0, delta = 0;
  double epsilon1 = 0, delta1 = 0, epsilon2 = 0, delta2 = 0;
  std::string noise = "os-entropy";
  DataReleaseParams release;
  SelectiveDpSgdParams selective;
  std::int64_t calibrate_steps = 0;  // > 0: noise_multiplier calibrated to spend the budget then
  std::string learner_id;
  ParamMap learner_params;
  std::int64_t eval_every = 0;
  int eval_episodes = 10;
  std::int64_t eval_max_steps = 0;      // 0: the env's own limit
  std::int64_t population_experts = 0;  // the population's experts (before any subset)
  bool population_on_disk = false;      // from pipeline_spec_of_run: read, never built
  std::optional<AuditParams> audit;     // the `audit:` section (selective_audit.hpp)
  Node resolved;                        // what config.yaml holds
  std::string digest;                   // SHA-256 of config.yaml's bytes
};

// Whether a config tree is a pipeline (top-level key `pipeline`).
bool is_pipeline(const Node& root);
// Parses and validates everything (population plan and learner included). base_dir resolves a
// population file name.
PipelineSpec parse_pipeline(const Node& root, const std::string& default_name,
                            const std::filesystem::path& base_dir, const RunOptions& opts);

// The spec of a pipeline that has run, from its run directory's config.yaml (the resolved
// config): what its privacy audit needs (selective_audit.hpp). The population is the one on disk
// at population.out (a selective run's release records the population it was drawn from, so a
// changed population fails the release's digest check), the evaluation env the population's env
// with default parameters, out the given directory.
// overrides ("a.b=value", e.g. audit.canaries=100) apply to config.yaml's tree first.
PipelineSpec pipeline_spec_of_run(const std::filesystem::path& run_dir,
                                  const std::vector<std::string>& overrides = {});

struct PipelineOptions {
  int jobs = 1;  // threads for the population and the expert queries
  Progress::Mode progress = Progress::Mode::kAuto;
};

// The train stage's inputs of a pipeline that has run, for its privacy audit
// (algos/run/selective_audit.hpp): the demonstrations (population reused by content
// hash, built when missing), the expert subset, and the stable and unstable data of the release
// read from <out>/release (a DataError when there is none of this config: an audit never draws a
// release, which would spend its budget again). Mode dp_sgd: all the data is unstable.
struct PipelineTrainData {
  Dataset data;
  std::optional<Dataset> stable, unstable;
  std::int64_t experts = 0;
};
PipelineTrainData pipeline_train_data(const PipelineSpec& spec, const PipelineOptions& opts);

// The demonstrations and the expert policies a pipeline's release reads: the population (built
// when missing, finished runs reused; with population_on_disk read as it is, and a DataError
// naming the directory when it is not built) and the expert subset when `experts` is below the
// population's.
struct PipelineExperts {
  Dataset data;
  std::vector<std::filesystem::path> policies;
};
PipelineExperts pipeline_experts(const PipelineSpec& spec, const PipelineOptions& opts);

// Everything that could refuse the pipeline once a stage has run, checked before any runs (no
// population trained, no budget charged, no file written): the run directory can be created,
// its pipeline ledger (when there is one) is readable and not already spent beyond the budget.
// (The learner's batch against the experts and every parameter are checked by parse_pipeline.)
// run_pipeline calls it first; `dprl run --check` on a pipeline runs parse_pipeline and this.
void check_pipeline(const PipelineSpec& spec);

// Runs (or reuses) every stage; returns the train stage's summary.
RunSummary run_pipeline(const PipelineSpec& spec, const PipelineOptions& opts);
RunSummary run_pipeline_file(const std::filesystem::path& file, const RunOptions& opts,
                             const PipelineOptions& popts);

}  // namespace dprl::algos
