// The Dirichlet mechanism for releasing a policy (a point of the probability simplex).
//
// Source: Gohari, Chen, Wu, Hale and Topcu, "Privacy-Preserving Kickstarting Deep Reinforcement
// Learning with Privacy-Aware Learners":
// Dir_k(pi) samples x ~ Dirichlet(k pi) for pi in the eta-restricted simplex
// Delta_{m,eta} = {x : sum x = 1, x_i >= eta}.
// Guarantee (Theorem 1), per query: for an L-Lipschitz f: R^d -> Delta_{m,eta} and observations
// within L2 distance b (b-adjacent; their images are within L b), the network f held fixed (not DP
// of f's training data), Dir_k o f is (epsilon, delta)-DP with
//   epsilon = sqrt(m) L b k log(1/tau) + (m-1) lgamma(k eta) + lgamma(k (1 - (m-1) eta))
//             - m lgamma(k / m)                                                    (eq. 12)
//   delta   = 1 - P(Dir_k([eta, ..., eta, 1 - (m-1) eta]) in Delta_{m,tau})          (eq. 6)
// delta is estimated by Monte Carlo (Z = 1 if a sample has a coordinate < tau). Instead of the
// Chebyshev bound of eq. (13) we report Hoeffding's interval: P(|mean - delta| >= t) <=
// 2 exp(-2 N t^2), so t = sqrt(ln(2/beta) / (2N)) at confidence 1 - beta; use delta_upper as
// the certified delta (it holds with probability >= 1 - beta over the Monte Carlo draw).
// For m = 2, delta is exact from the Beta CDF (dirichlet_delta_exact_m2, for k <= 1e8; ParamError
// beyond, where the continued fraction would not converge), used as a test.
// Lemma 1 (eq. 14): P(||Dir_k(pi) - pi||_2 >= sqrt(log(1/beta) / (2 (k+1)))) <= beta, the
// radius students use (concentration_radius); as an L2 bound it is false (it matches a
// one-coordinate Hoeffding bound), so it is only a heuristic threshold.
// Sampling: Dir(k pi) is drawn as normalised Gamma(k pi_i) samples (NoiseSource::dirichlet), in
// floating point even with a secure NoiseSource: the mechanism is NOT protected against
// floating-point attacks (Mironov 2012) on the released values.
// Validity and validation (ParamError naming the parameter): k > 0, m >= 2, eta in (0, 1/m],
// tau in (0, 1/m), lipschitz > 0, adjacency > 0, samples >= 1, beta in (0, 1); release() checks
// the input lies in Delta_{m,eta} (sum within 1e-9 of 1, entries >= eta - 1e-12).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "engine/params.hpp"
#include "privacy/noise_source.hpp"

namespace dprl::privacy {

struct DirichletParams {
  double k = 10.0;         // concentration
  double eta = 0.01;       // lower bound of the input's entries
  double tau = 0.001;      // output region Delta_{m,tau} of the epsilon bound
  int actions = 2;         // m
  double lipschitz = 1.0;  // L
  double adjacency = 1.0;  // b
  template <class V>
  void visit(V& v) {
    v("k", k, Range::positive(), "Dirichlet concentration k");
    v("eta", eta, Range::left_open(0, 0.5), "minimum entry of the input policy");
    v("tau", tau, Range::open(0, 0.5), "output region threshold tau");
    v("actions", actions, Range::at_least(2), "number of actions m");
    v("lipschitz", lipschitz, Range::positive(), "Lipschitz constant L of the policy map");
    v("adjacency", adjacency, Range::positive(), "adjacency distance b");
  }
  void check() const;  // eta <= 1/m, tau < 1/m
};

double dirichlet_epsilon(const DirichletParams& p);

struct DeltaEstimate {
  double estimate;
  double half_width;    // Hoeffding at confidence 1 - beta
  double lower, upper;  // clamped to [0, 1]
  double confidence;    // 1 - beta
  std::int64_t samples;
};
DeltaEstimate dirichlet_delta_mc(const DirichletParams& p, std::int64_t samples, NoiseSource& noise,
                                 double beta = 1e-6);
double dirichlet_delta_exact_m2(double k, double eta, double tau);
double concentration_radius(double k, double beta);

class DirichletMechanism {
 public:
  explicit DirichletMechanism(DirichletParams p);
  // out = Dir(k * pi) sample; pi must be in Delta_{m,eta}, out.size() == pi.size() == m.
  void release(std::span<const double> pi, std::span<double> out, NoiseSource& noise) const;
  double epsilon() const { return epsilon_; }

 private:
  DirichletParams p_;
  double epsilon_;
};

// One parameter set's guarantee, as `dprl privacy dirichlet` reports it: epsilon (eq. 12), delta
// by Monte Carlo (eq. 6; `samples` draws from the seeded stream of `seed`) and, for m = 2, the
// exact delta (NaN otherwise). The work is bounded before anything runs (ParamError naming
// "samples" or "actions"): at most kDirichletMaxActions actions and kDirichletMaxDraws gamma draws
// (samples x actions, about 50 ns each: 1e10 is about ten minutes).
inline constexpr int kDirichletMaxActions = 1000000;
inline constexpr double kDirichletMaxDraws = 1e10;

struct DirichletReport {
  double epsilon = 0.0;
  DeltaEstimate delta{};
  double delta_exact = 0.0;  // m = 2; NaN otherwise
  std::string noise_source;  // of the Monte Carlo draws
};
DirichletReport dirichlet_report(const DirichletParams& p, std::int64_t samples,
                                 std::uint64_t seed);
// One line of JSON: epsilon ("inf" when infinite), delta (the estimate), delta_ci, delta_upper (the
// certified delta), confidence, samples, noise_source, and delta_exact when m = 2.
std::string dirichlet_report_json(const DirichletReport& r);

}  // namespace dprl::privacy
