// A run directory: the resolved config, metrics.csv and summary.json, each written atomically.
//
//   <out>/config.yaml    the resolved experiment (defaults filled in, overrides applied)
//   <out>/metrics.csv    one row per evaluation; columns fixed by the first row
//   <out>/summary.json   final figures, privacy guarantee, versions, seed
//   <out>/timing.json    wall-clock figures: {"wall_time_s": ..., then any the learner wrote to
//                        timing.json during the run (stage times)}, the only bytes that vary
//
// summary.json keys (read by our checks): seed, env_steps,
// final_eval {return_mean, return_std, episodes}, privacy (null or the guarantee record below),
// versions {dprl, git_commit, compiler}, git_commit, plus env, algo and name. It holds no
// wall-clock figure, so it is byte-identical across thread counts, MPI ranks and reruns.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/config.hpp"
#include "engine/neighbouring.hpp"
#include "engine/state_io.hpp"

namespace dprl {

struct EvalStats {
  double return_mean = 0;
  double return_std = 0;  // population standard deviation over episodes
  double return_min = 0;
  double return_max = 0;
  double length_mean = 0;
  int episodes = 0;
};

// The guarantee record of a private output: what (epsilon, delta) was spent, for which neighbouring
// relation and privacy unit, and which published outputs it covers. summary.json's "privacy":
//   {epsilon (number or "inf"), delta, accountant, neighbouring ("add-remove" | "replace"),
//    unit, sensitivity, covers [...], not_covered [...], formal, noise_source,
//    reproducible_noise, details}
// not_covered names the files written next to the covered ones that the guarantee does NOT
// cover; every record names timing.json (kTimingNotCovered) there: its wall and CPU seconds per
// stage depend on the data and on the secret sample sizes, so whoever publishes a run publishes
// it only with that understood.
// formal is true only when every output the run publishes is post-processing of the accounted
// releases under the stated relation, with noise nobody else can regenerate; otherwise covers and
// details say exactly what the figures do and do not cover.
inline constexpr const char* kTimingNotCovered =
    "timing.json (wall and CPU seconds per stage: they depend on the data and on the secret "
    "sample sizes; a timing side channel, not covered)";

struct PrivacyReport {
  double epsilon = 0;  // +inf is written as the string "inf"
  double delta = 0;
  // the part of delta owed to the table-based Gaussian sampler's distance from the exact discrete
  // Gaussian (privacy/secure_release.hpp, sampler_delta; included in delta, written only when > 0)
  double sampler_delta = 0;
  std::string accountant;    // "rdp", "pld", "best", "basic", ...
  // written "add-remove" or "replace" (engine/neighbouring.hpp); "" when unset (a record read
  // back from a summary without it)
  std::optional<NeighbouringRelation> neighbouring;
  std::string unit;  // one individual: sample, transition, trajectory, episode, expert, query
  std::string sensitivity;          // e.g. "L2 2C per released vector"
  std::vector<std::string> covers;  // files and figures the guarantee covers
  // files written next to them that it does not cover (a learner may add its own)
  std::vector<std::string> not_covered = {kTimingNotCovered};
  bool formal = false;
  std::string noise_source;         // "seeded", "os-entropy(secure)", ...
  bool reproducible_noise = false;  // seeded noise: anyone holding the seed can subtract it
  std::string details_json;         // optional extra JSON object text (events...), "" for none
};

struct RunSummary {
  std::string name;
  std::string env;
  std::string algo;
  std::uint64_t seed = 0;
  std::int64_t env_steps = 0;
  std::int64_t gradient_steps = 0;  // updates of the learned parameters (algos::TrainSteps)
  std::int64_t episodes = 0;
  double wall_time_s = 0;  // written to timing.json, never to summary.json
  EvalStats final_eval;
  std::optional<PrivacyReport> privacy;
  std::vector<std::pair<std::string, double>> extra;  // algorithm-specific final figures
  std::string audit_json;      // an empirical privacy audit's JSON object ("" for none)
  bool audit_refuted = false;  // that audit's lower bound exceeds the claimed epsilon
  std::string dir;             // the run directory written ("" when nothing was written)
};

class RunDir {
 public:
  // Creates the directory (and parents).
  explicit RunDir(std::filesystem::path dir);
  ~RunDir();
  RunDir(const RunDir&) = delete;
  RunDir& operator=(const RunDir&) = delete;

  const std::filesystem::path& path() const { return dir_; }
  void write_config(const Node& resolved) const;
  // Appends a row; the first call fixes the columns, later rows must have the same names. Rows are
  // buffered and metrics.csv is rewritten atomically at most every two seconds, on
  // flush_metrics(), before the summary is written, and on destruction.
  void append_metrics(const std::vector<std::pair<std::string, double>>& row);
  void flush_metrics();
  // Held metrics reach metrics.csv only through explicit flush_metrics() calls (a private run's
  // checkpoints and the end of the run), never on a timer or on destruction: rows made from
  // releases after the last checkpoint do not leave the process before the next one.
  void hold_metrics() { held_ = true; }
  // Saves or loads the metrics rows so far (checkpoints); a load marks metrics.csv for rewriting.
  void sync_metrics(StateIo& io);
  // A resumed run: metrics.csv keeps the killed run's rows, untouched, until resumed() says the
  // whole checkpoint was restored (a damaged one is refused without rewriting metrics.csv).
  void defer_until_resumed() { deferred_ = true; }
  void resumed() { deferred_ = false; }
  // summary.json, then timing.json.
  void write_summary(const RunSummary& s);
  // Any other file, atomically.
  void write_file(const std::string& name, std::string_view content) const;

 private:
  std::filesystem::path dir_;
  std::vector<std::string> columns_;
  std::string metrics_;
  bool dirty_ = false;
  bool loaded_ = false;  // columns_ and metrics_ came from a checkpoint
  bool held_ = false;
  bool deferred_ = false;  // resuming: no write of metrics.csv before resumed()
  std::chrono::steady_clock::time_point last_flush_;
};

// The guarantee record as a JSON object (what summary.json holds under "privacy").
std::string privacy_json(const PrivacyReport& r);
// The summary as JSON text (what write_summary writes to summary.json).
std::string summary_json(const RunSummary& s);
// The wall-clock figures as JSON text (what write_summary writes to timing.json).
std::string timing_json(const RunSummary& s);

}  // namespace dprl
