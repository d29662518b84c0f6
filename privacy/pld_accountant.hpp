// PLD accountant: privacy loss distributions composed by FFT.
//
// Sources: Koskela, Jalko, Honkela 2020 (FFT composition of PLDs); Doroshenko, Ghazi, Kamath,
// Kumar, Manurangsi 2022, "Connect the Dots: Tighter Discrete Approximations of Privacy Loss
// Distributions" (the discretization); Google dp_accounting's PLDAccountant (defaults we match:
// value_discretization_interval h = 1e-4, tail-mass truncation 1e-15).
// Events: gaussian(z), laplace(b), poisson_sampled(q, gaussian(z)), and their self-compositions
// and compositions; anything else is refused with ParamError. discrete_gaussian(z), sampled or
// not (the secure noise), has no proven privacy loss distribution here (its curve is not the
// continuous Gaussian's): once one is composed, epsilon() is the RDP accountant's proven bound of
// the WHOLE composition (rdp_accountant.hpp: Zhu-Wang's Poisson-subsampling bound on the discrete
// Gaussian's RDP), never the continuous curve; uses_rdp_bound() says so.
// Neighbouring relation: add or remove one unit. Both directions (remove: P = mixture, Q =
// N(0, z^2); add: the reverse) are composed separately and epsilon is the larger of the two.
// Discretization (pessimistic by construction; pld_curves.hpp): for each single mechanism the
// exact hockey-stick curve delta(eps) is evaluated at grid points eps_i = i h covering the loss
// range (loss tails beyond 9.6 standard deviations of the noise, mass < 1e-21, are sent to +inf
// loss), and the discrete PLD is the unique one whose delta curve equals the true one at every grid
// point and is linear in e^eps in between ("connect the dots"). Because delta(eps) is convex in
// e^eps, the discrete curve lies on or above the true one: the discrete PLD dominates the
// mechanism, and so do its compositions. Composition: the PMF is self-convolved with one real FFT
// raised to the power n (Eigen's FFT module); the support is cut by Chernoff bounds to where the
// truncated tails hold < 1e-15, and 1e-15 is added to the +inf mass so the truncation stays
// pessimistic.
// Edge behaviour (never NaN, never a silent 0):
// - one mechanism's grid holds at most 2^22 points (a loss range of 419 nats at h = 1e-4); loss
//   beyond it goes to the +inf mass. Tiny noise multipliers (at T = 1, delta = 1e-5: z below
//   ~0.04 at q = 0.01, ~0.03 at q = 1; every z > 0 is accepted) therefore give epsilon = +inf
//   unless delta exceeds that mass; the RDP accountant still gives a finite bound there and
//   "best" reports it.
// - when the +inf masses alone exceed delta, epsilon is +inf at once (nothing is composed); so is
//   any delta below the 1e-15 truncation mass of a composition.
// - a composition whose support would exceed 2^24 points (128 MiB per FFT buffer), or counts
//   beyond 2^53, throws ParamError naming the limit (e.g. z = 0.05, q = 0.01, T = 100); "best"
//   then falls back to RDP.
// Accuracy: the grid error is pessimistic and shrinks with the interval. At h = 1e-4 our epsilons
// equal those of dp_accounting's PLDAccountant (google/differential-privacy, python/dp_accounting
// 0.6.0, connect-the-dots, pessimistic estimate, default settings) to 4e-8 relative or better on
// every fixture case (tests/privacy/fixtures/dp_accounting.json; the test allows 1e-7).
// Validity: z > 0, q in (0, 1], b > 0, h in [1e-6, 0.1].
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "privacy/accountant.hpp"
#include "privacy/rdp_accountant.hpp"

namespace dprl::privacy {

inline constexpr double kDefaultPldInterval = 1e-4;

// A discrete privacy loss distribution: mass[i] at loss (offset + i) * interval, plus +inf mass.
struct Pld {
  double interval = kDefaultPldInterval;
  std::int64_t offset = 0;
  std::vector<double> mass;
  double infinity_mass = 0.0;

  // Smallest epsilon >= 0 with delta(epsilon) <= delta (+inf if infinity_mass > delta).
  double epsilon(double delta) const;
  // delta(epsilon) = inf_mass + sum_{l > eps} p_l (1 - e^(eps - l)).
  double delta(double epsilon) const;
};

// Connect-the-dots PLD of one mechanism; remove = true for the remove direction.
Pld pld_subsampled_gaussian(double q, double z, bool remove, double interval);
Pld pld_laplace(double scale, double interval);
// n-fold self-composition and composition of two PLDs (same interval).
Pld pld_self_compose(const Pld& p, std::int64_t n, double tail_mass = 1e-15);
Pld pld_compose(const Pld& a, const Pld& b);

class PldAccountant : public Accountant {
 public:
  explicit PldAccountant(double interval = kDefaultPldInterval);
  std::string name() const override { return "pld"; }
  bool supports(const DpEvent& event) const override;
  void compose(const DpEvent& event, std::int64_t count = 1) override;
  double epsilon(double delta) const override;
  // delta(epsilon) of the composed PLD (Pld::delta), the larger of the two directions; the same
  // pessimistic discretization as epsilon(), so it is an upper bound of the exact delta.
  double delta(double epsilon) const override;
  std::unique_ptr<Accountant> clone() const override {
    return std::make_unique<PldAccountant>(*this);
  }
  // True once a discrete_gaussian event is composed: epsilon() and delta() are then the RDP
  // bound's.
  bool uses_rdp_bound() const { return discrete_; }

 private:
  // a flattened event: kind (0 gaussian/subsampled gaussian, 1 laplace), q, z or b, count
  struct Atom {
    int kind;
    double q;
    double value;
    double count;
  };
  void add(const DpEvent& e, double count);
  // The composition of every atom in one direction (remove = true: P is the mixture), or nothing
  // when the +inf masses alone exceed max_infinity_mass.
  std::optional<Pld> compose_direction(bool remove, double max_infinity_mass) const;
  // An RdpAccountant holding everything composed (the proven bound for discrete_gaussian).
  RdpAccountant rdp_bound() const;
  double interval_;
  std::vector<Atom> atoms_;
  bool discrete_ = false;
  std::vector<std::pair<DpEvent, std::int64_t>> events_;  // everything composed, for the RDP bound
};

}  // namespace dprl::privacy
