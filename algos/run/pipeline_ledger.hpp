// The expert-level pipeline's persistent ledger (<out>/pipeline_ledger.json): every draw of a
// stage that reads the private data and publishes something (a DataRelease, a train stage) is
// charged here before it runs, so a release drawn again (another release config, a damaged or
// removed release.json, a kill between stable/ and release.json) or a train stage run again on the
// same directory composes with the earlier draws instead of being reported alone.
//
// Composition: basic composition (Dwork and Roth Thm. 3.16; paper 000 Thm. 5.6): draws that are
// (eps_i, delta_i)-DP under the pipeline's relation (add/remove one expert) compose, adaptively,
// to (sum eps_i, sum delta_i). The release's part is charged at its exact advanced-composition
// figure; a train stage at its budget (epsilon2, delta2), settled to what its own accountant says
// it spent once it ends (the number of its noisy steps is data-independent, so the spent figure
// is its guarantee).
// Crash safety, as privacy/ledger.hpp: charge -> durable (write_file_atomic: fsync, rename,
// directory fsync) -> draw. A kill after a charge leaves it on disk; the next run reuses it only
// when the killed draw is known to have published nothing (reuse_last), else it charges anew.
// Budget: a charge whose composed total would exceed the config's (epsilon, delta) is refused
// with BudgetExceeded naming the file, before anything is drawn.
// Integrity: the file carries an FNV-1a 64 checksum of the rest; a damaged file is refused
// (DataError naming it), never reset.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace dprl::algos {

struct PipelineCharge {
  std::string stage;   // "release" or "train"
  std::string digest;  // the config of the draw (release digest, or the pipeline's config digest)
  std::string label;
  double epsilon = 0, delta = 0;
};

class PipelineLedger {
 public:
  static constexpr const char* kFileName = "pipeline_ledger.json";
  // Opens dir/pipeline_ledger.json (reloaded when it exists) for a budget (epsilon, delta).
  PipelineLedger(const std::filesystem::path& dir, double epsilon, double delta);

  // Charges a draw; durable when it returns. BudgetExceeded (nothing charged) beyond the budget.
  std::size_t charge(const PipelineCharge& c);
  // The last charge when it is of this stage and digest.
  std::optional<std::size_t> last_of(const std::string& stage, const std::string& digest) const;
  // Lowers charge i's epsilon to what its draw spent (never raises it).
  void settle(std::size_t i, double epsilon);

  double epsilon() const;  // composed (basic composition)
  double delta() const;
  const std::vector<PipelineCharge>& charges() const { return charges_; }
  const std::filesystem::path& file() const { return file_; }
  // The file's JSON text (what is written).
  std::string to_json() const;

 private:
  void save() const;
  std::filesystem::path file_;
  double budget_eps_, budget_delta_;
  std::vector<PipelineCharge> charges_;
};

}  // namespace dprl::algos
