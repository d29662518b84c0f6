#include "algos/audit/dirac_tap.hpp"

#include "algos/audit/audit_report.hpp"
#include "engine/error.hpp"
#include "privacy/one_run_audit.hpp"

namespace dprl::algos {

PoissonDiracTap::PoissonDiracTap(CanarySet& canaries, double q, double magnitude,
                                 double noise_factor, std::uint64_t seed)
    : c_(canaries),
      q_(q),
      magnitude_(magnitude),
      noise_factor_(noise_factor),
      rng_(seed),
      sampled_(canaries.in.size(), 0) {}

double PoissonDiracTap::before(const Release& r, std::span<double> x) {
  DPRL_CHECK(x.size() >= sampled_.size());
  for (std::size_t j = 0; j < sampled_.size(); ++j) {
    sampled_[j] = c_.in[j] && rng_.uniform() < q_;
    if (sampled_[j]) x[j] += magnitude_;
  }
  return r.sd * noise_factor_;
}

void PoissonDiracTap::after(const Release& r, std::span<double> x) {
  const std::size_t m = sampled_.size();
  if (sd_ == 0) sd_ = robust_scale(x.first(m), r.sd);
  for (std::size_t j = 0; j < m; ++j)
    c_.score[j] += privacy::audit::poisson_llr(x[j], magnitude_, sd_, q_);
}

}  // namespace dprl::algos
