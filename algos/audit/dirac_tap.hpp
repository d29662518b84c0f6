// White-box Dirac canaries in a Poisson-sampled Gaussian release of a sum (user-level DP-SGD).
//
// Source: Steinke, Nasr and Jagielski, "Privacy Auditing with One (1) Training Run" (NeurIPS
// 2023), the white-box gradient canaries of their Section 5. Canary j of a CanarySet, when
// included, is sampled at every release with probability q (its own coin, as a user of the
// population is) and then adds `magnitude` to coordinate j of the vector about to be noised (a
// user whose clipped contribution is magnitude e_j: within the declared sensitivity when
// magnitude <= C). Its score adds, per release, poisson_llr(x_j, magnitude, sd, q)
// (privacy/one_run_audit.hpp): the Neyman-Pearson statistic of "included" against "excluded".
// The noise scale sd is estimated from the first release (1.4826 times the median absolute
// deviation of the canary coordinates), as an auditor who sees only the releases would. The tap
// draws the noise at noise_factor times the accounted standard deviation (1 unless a test
// mis-specifies the learner). Needs M <= the released vector's length.
#pragma once

#include <cstdint>
#include <vector>

#include "algos/audit/audit_report.hpp"
#include "engine/rng.hpp"
#include "privacy/release_tap.hpp"

namespace dprl::algos {

class PoissonDiracTap final : public privacy::ReleaseTap {
 public:
  PoissonDiracTap(CanarySet& canaries, double q, double magnitude, double noise_factor,
                  std::uint64_t seed);
  double before(const Release& r, std::span<double> x) override;
  void after(const Release& r, std::span<double> x) override;
  double sd_seen() const { return sd_; }

 private:
  CanarySet& c_;
  double q_, magnitude_, noise_factor_;
  Rng rng_;
  std::vector<char> sampled_;
  double sd_ = 0;
};

}  // namespace dprl::algos
