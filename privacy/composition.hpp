// Composition theorems for (epsilon, delta)-DP and zero-concentrated DP conversions.
//
// Sources and guarantees (any neighbouring relation, as long as all mechanisms share it):
// - Basic composition (Dwork and Roth 2014, Thm. 3.16): k mechanisms (eps0, delta0)-DP compose to
//   (k eps0, k delta0)-DP.
// - Advanced composition (Dwork, Rothblum, Vadhan 2010; Dwork and Roth 2014, Thm. 3.20): for any
//   delta' > 0, k-fold adaptive composition of (eps0, delta0)-DP mechanisms is (eps, k delta0 +
//   delta')-DP with eps = sqrt(2 k ln(1/delta')) eps0 + k eps0 (e^eps0 - 1). Natural logs.
// - Inverse (Dwork and Roth Cor. 3.21): eps0 = eps / (2 sqrt(2 k ln(1/delta'))) gives total
//   epsilon <= eps for eps <= 1 (and in general the exact inverse below is tighter).
// - zCDP (Bun and Steinke 2016): rho-zCDP implies (rho + 2 sqrt(rho ln(1/delta)), delta)-DP
//   (Prop. 1.3); the tighter conversion of Canonne, Kamath, Steinke 2020 (Prop. 12 / Cor. 13):
//   eps = inf_{a > 1} [ rho a + ln(1 - 1/a) + (ln(1/delta) - ln a) / (a - 1) ],
//   minimised by golden-section search on a in (1, 1e7] (the expression is unimodal in a), then
//   floored at 0; never larger than Prop. 1.3.
//   The Gaussian mechanism with noise multiplier z is (1/(2 z^2))-zCDP.
// Validation (ParamError naming parameter and rule): eps0 > 0, delta0 in [0, 1), k >= 1,
// delta' in (0, 1), rho > 0, delta in (0, 1).
#pragma once

#include <cstdint>

namespace dprl::privacy {

struct EpsDelta {
  double epsilon;
  double delta;
};

EpsDelta basic_composition(double eps0, double delta0, std::int64_t k);
EpsDelta advanced_composition(double eps0, double delta0, std::int64_t k, double delta_slack);
// Largest per-step eps0 whose advanced composition over k steps stays <= eps (bisection on the
// exact expression; the Cor. 3.21 closed form is a lower bound of it).
double advanced_composition_inverse(double eps, std::int64_t k, double delta_slack);
// Cor. 3.21's closed form eps / (2 sqrt(2 k ln(1/delta'))).
double advanced_composition_inverse_dr(double eps, std::int64_t k, double delta_slack);

double zcdp_to_epsilon_bun_steinke(double rho, double delta);
double zcdp_to_epsilon_cks(double rho, double delta);

}  // namespace dprl::privacy
