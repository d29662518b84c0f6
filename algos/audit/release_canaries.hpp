// White-box canaries in a learner's Gaussian releases at their declared sensitivity, for the
// learners whose every release carries every user (no subsampling): actor_critic and private
// lsvi_ucb (algos/actor_critic/actor_critic_audit.hpp, algos/lsvi/lsvi_ucb_audit.hpp).
//
// Source: Steinke, Nasr and Jagielski, "Privacy Auditing with One (1) Training Run" (NeurIPS
// 2023), white-box canaries. A Gaussian release of x with declared L2 sensitivity Delta (the
// largest change one unit can make to x under the learner's neighbouring relation) is tested on
// canaries that change x by exactly Delta: canary j, at its coordinate k_j of the releases that
// carry it (a placement the learner's audit chooses), adds
//   replace:     +Delta / 2 when included, -Delta / 2 when not (neighbours differ by Delta);
//   add-remove:  +Delta when included, 0 when not.
// Its score adds the log likelihood ratio of the released x[k_j] between the two,
// (x Delta - c) / sd^2 (c = 0 for replace, Delta^2 / 2 for add-remove; sd the accounted noise
// standard deviation): with no subsampling this is the Neyman-Pearson statistic of the whole
// transcript. After the release the tap subtracts the canary's contribution again: the learner
// continues from the release minus a value the auditor chose, so its later data-dependent
// computations are those of a run without canaries and the releases stay the claimed Gaussian
// mechanisms. Releases with sd = 0 or Delta = 0 (nothing noised), and non-finite releases (a
// diverged learner), carry no canary.
// Mis-specification: noise_factor scales the standard deviation drawn, sensitivity_factor the
// canaries' Delta (the claim stays that of the learner's configuration).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "algos/audit/audit_report.hpp"
#include "algos/core/algorithm.hpp"
#include "privacy/release_tap.hpp"

namespace dprl::algos {

class ReleaseCanaries final : public privacy::ReleaseTap {
 public:
  // The coordinate of canary j in release r (-1: r does not carry canary j).
  using Placement = std::function<std::int64_t(const Release& r, std::int64_t j)>;
  ReleaseCanaries(CanarySet& canaries, bool replace, double noise_factor, double sensitivity_factor,
                  Placement place);
  double before(const Release& r, std::span<double> x) override;
  void after(const Release& r, std::span<double> x) override;
  // Releases that carried canaries, per channel index (0..3).
  std::int64_t releases(int channel) const { return count_[channel & 3]; }

 private:
  double shift(const Release& r, std::int64_t j) const;

  CanarySet& c_;
  bool replace_;
  double noise_factor_, sens_factor_;
  Placement place_;
  std::int64_t count_[4] = {0, 0, 0, 0};
};

// One audited training of a learner that carries a ReleaseCanaries tap (no evaluations, no
// checkpoint, no progress line; seed from the audit's stream 5), then the report's common part:
// the claim from the learner's privacy record (DataError naming the learner when it has none),
// white-box mode, the canaries tallied over `guesses`. The record is returned in `record`.
AuditReport run_release_audit(Algorithm& audited,
                              const std::function<std::unique_ptr<Env>()>& make_env,
                              const TrainParams& train, const AuditParams& a,
                              const CanarySet& canaries, const std::string& learner,
                              PrivacyReport& record);

}  // namespace dprl::algos
