// RDP accountant for Gaussian, discrete Gaussian, Laplace and Poisson-subsampled Gaussian and
// discrete Gaussian events.
//
// Sources:
// - Renyi DP and its composition: Mironov 2017, "Renyi Differential Privacy", Prop. 1 and 6
//   (Laplace: RDP(a) = eps + log(1 + (a-1)(exp((1-2a) eps) - 1)/(2a-1)) / (a-1), eps = 1/b).
// - Poisson-subsampled Gaussian: Mironov, Talwar, Zhang 2019, "Renyi DP of the Sampled Gaussian
//   Mechanism", sec. 3: RDP(a) = log(A_a) / (a - 1) with
//   A_a = E_{x ~ N(0, z^2)} [ (1 - q + q exp((2x - 1) / (2 z^2)))^a ].
//   Integer a: the binomial sum sum_i C(a,i) q^i (1-q)^(a-i) exp((i^2 - i) / (2 z^2)), summed in
//   log space (exact). Fractional a: the integral split at z0 = z^2 log(1/q - 1) + 1/2 and each
//   half expanded as a binomial series with Gaussian-tail factors, keeping the SIGNS of C(a, i)
//   (dp_accounting adds absolute values: an upper bound, ~1.3% high on the PriMORL cases, far
//   more for large q, where its series may also fail to converge and drop the order). The series
//   stops once both halves' terms decrease and lie 25 nats below the sum; the alternating tail is
//   then bounded by the last term's magnitude, which we add, so the value is never below the
//   true RDP; it exceeds it by < 1.4e-11 in A_a, i.e. < 1e-6 relative in RDP in every case checked
//   against 40-digit quadrature (far inside the 0.5% target). q = 1 gives a / (2 z^2) exactly.
// - Poisson-subsampled DISCRETE Gaussian (discrete_gaussian events, the secure noise of
//   secure_sampling.hpp): its privacy curve is not the continuous one, so the analysis above is
//   not proven for it. We use the bound of Zhu and Wang 2019, "Poisson Subsampled Renyi
//   Differential Privacy" (ICML), Thm. 6, which holds for ANY mechanism with RDP curve eps(l) at
//   integer orders a >= 2:
//     A_a <= (1-q)^(a-1) (aq - q + 1) + C(a,2) q^2 (1-q)^(a-2) e^(eps(2))
//            + 3 sum_{l=3..a} C(a,l) q^l (1-q)^(a-l) e^((l-1) eps(l)),  RDP = log(A_a)/(a-1),
//   applied to the discrete Gaussian's proven curve eps(l) = l / (2 z^2) (Canonne, Kamath,
//   Steinke 2020, "The Discrete Gaussian for Differential Privacy", NeurIPS, Thm. 14: (1/(2 z^2))-
//   zCDP for an L2 distance of z-scaled grid steps). A fractional order takes the bound at
//   ceil(order) (Renyi divergence is non-decreasing in the order), and the result is never above
//   the unsampled curve a / (2 z^2) (subsampling never raises a Renyi divergence), which it
//   equals at q = 1. At a = 2 the bound equals the continuous Gaussian's exact value; above, the
//   factor 3 costs at most log(3)/(a-1).
// - Conversion to (epsilon, delta): Canonne, Kamath, Steinke 2020, Prop. 12 (also Balle et al.
//   2020): eps = rdp + log(1 - 1/a) - (log(delta) + log(a)) / (a - 1), for orders a > 1.01,
//   minimised over the order grid, with dp_accounting's KL shortcut (epsilon = 0 at an order whose
//   rdp satisfies delta^2 > 1 - exp(-rdp)), floored at 0.
//   Its inverse, for delta(epsilon), is dp_accounting's RDP-to-delta conversion
//   (rdp_privacy_accountant.py, compute_delta): at each order a > 1.01,
//   log delta = (a - 1)(rdp - eps + log(1 - 1/a)) - log(a), and at every order the KL bound
//   delta = sqrt(1 - exp(-rdp)); the minimum over orders, capped at 1. The same orders attain both
//   minima, so epsilon(delta(e)) = e up to rounding wherever delta(e) < 1.
// Orders: dp_accounting's default grid of 156 orders (1.1..10.9 step 0.1, 11..63, 128, 256, 512,
// 1024), so results are comparable.
// Guarantee: (epsilon, delta)-DP under add/remove-one adjacency of the sampled unit.
// Validity: z >= 0 (z = 0 gives +inf), q in (0, 1], orders > 1. A fractional order whose series
// does not converge in 1000 terms is dropped (RDP +inf at that order), as dp_accounting does.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "privacy/accountant.hpp"

namespace dprl::privacy {

// dp_accounting's DEFAULT_RDP_ORDERS (156 values).
const std::vector<double>& default_rdp_orders();

// Per-step RDP of the Poisson-subsampled Gaussian at one order (q = 1: plain Gaussian).
double rdp_subsampled_gaussian(double q, double noise_multiplier, double order);
// The same with dp_accounting's absolute-value fractional series (for comparison only: an upper
// bound, not the exact value).
double rdp_subsampled_gaussian_abs_series(double q, double noise_multiplier, double order);
// Per-step RDP bound of the Poisson-subsampled discrete Gaussian at one order (see above).
double rdp_subsampled_discrete_gaussian(double q, double noise_multiplier, double order);
// RDP of the Laplace mechanism with scale b (per unit L1 sensitivity) at an order > 1.
double rdp_laplace(double scale, double order);

struct RdpConversion {
  double epsilon;
  double order;  // the order attaining the minimum (0 if none)
};
// Minimum over orders of the CKS conversion (see above).
RdpConversion rdp_to_epsilon(std::span<const double> orders, std::span<const double> rdp,
                             double delta);
struct RdpDeltaConversion {
  double delta;
  double order;  // the order attaining the minimum (0 if none)
};
// Minimum over orders of the inverse conversion (see above); epsilon finite and >= 0.
RdpDeltaConversion rdp_to_delta(std::span<const double> orders, std::span<const double> rdp,
                                double epsilon);
// The classical conversion min_a rdp + log(1/delta)/(a-1) (Mironov 2017 Prop. 3), for comparison.
double rdp_to_epsilon_classical(std::span<const double> orders, std::span<const double> rdp,
                                double delta);

class RdpAccountant : public Accountant {
 public:
  RdpAccountant() : RdpAccountant(default_rdp_orders()) {}
  // orders must all be > 1 (ParamError otherwise).
  explicit RdpAccountant(std::vector<double> orders);

  std::string name() const override { return "rdp"; }
  bool supports(const DpEvent& event) const override;
  void compose(const DpEvent& event, std::int64_t count = 1) override;
  double epsilon(double delta) const override;
  RdpConversion epsilon_and_order(double delta) const;
  double delta(double epsilon) const override;
  RdpDeltaConversion delta_and_order(double epsilon) const;
  std::unique_ptr<Accountant> clone() const override {
    return std::make_unique<RdpAccountant>(*this);
  }

  const std::vector<double>& orders() const { return orders_; }
  const std::vector<double>& rdp() const { return rdp_; }

 private:
  void add(const DpEvent& event, double count);
  std::vector<double> orders_;
  std::vector<double> rdp_;
};

// Epsilon of T steps of DP-SGD (Poisson rate q, noise multiplier z) under RDP at delta:
//   rdp_dpsgd_epsilon({.noise_multiplier = 1.1, .sampling_rate = 0.01, .steps = 1000}, 1e-5)
double rdp_dpsgd_epsilon(const DpsgdSpec& spec, double delta);

}  // namespace dprl::privacy
