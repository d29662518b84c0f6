// A white-box auditor's access to a learner's Gaussian releases.
//
// The one-run privacy audits (Steinke, Nasr and Jagielski, "Privacy Auditing with One (1)
// Training Run", NeurIPS 2023; the learners' audits in algos/audit/) insert canaries into the
// statistic a learner is about to noise and score them on what it releases. A learner that
// accepts a tap calls, around each of its Gaussian releases,
//   sd' = tap.before(r, x)   with x the vector about to be noised, r.sd the noise standard
//                            deviation the learner's guarantee accounts and r.sensitivity the L2
//                            sensitivity it declares for this release; the tap may add canary
//                            contributions of at most that sensitivity to x, and returns the
//                            standard deviation to draw (r.sd, or a deliberately wrong one when
//                            the audit tests itself on a mis-specified learner);
//   <the learner's own release of x at sd'>
//   tap.after(r, x)          x is now the released vector; the tap scores its canaries and may
//                            subtract their contributions, which it chose, so that the learner
//                            continues as it would have without them.
// Guarantee: none of its own. A learner without a tap (the default) releases exactly as
// before; a tap changes what is released and is for audits only, never for a run whose outputs
// are published.
#pragma once

#include <cstdint>
#include <span>

namespace dprl::privacy {

class ReleaseTap {
 public:
  struct Release {
    int channel = 0;         // which kind of release (per learner: actor/critic, gram/target...)
    int part = 0;            // a part released together with others (e.g. the step h)
    std::int64_t round = 0;  // the release's count within its channel (from 1)
    double sd = 0;           // the accounted noise standard deviation per element
    double sensitivity = 0;  // the declared L2 sensitivity of the release
  };
  virtual ~ReleaseTap() = default;
  // Before the noise: may add canaries to x; returns the standard deviation to draw.
  virtual double before(const Release& r, std::span<double> x) = 0;
  // After the noise: x is the released vector.
  virtual void after(const Release& r, std::span<double> x) = 0;
};

}  // namespace dprl::privacy
