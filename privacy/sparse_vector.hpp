// Sparse vector technique: AboveThreshold and the parameter pieces of PrefixQuery / DataRelease.
//
// Sources:
// - AboveThreshold: Dwork and Roth 2014, Algorithm 1 (sec. 3.6). For queries of sensitivity
//   Delta, the noisy threshold is T + Lap(2 Delta / eps) and each query gets Lap(4 Delta / eps);
//   it halts at the first query above the noisy threshold. Guarantee: eps-DP (Thm. 3.23) for the
//   whole stream, under the neighbouring relation that defines Delta.
// - Expert-level DP offline RL (Sharma et al., "Preserving Expert-Level Privacy in Offline
//   Reinforcement Learning", TMLR, Algorithms 1 and 2): neighbouring
//   relation = expert sets differing in one expert (expert level); Assumption 3.4: every expert's
//   action probabilities are >= p_min. DataRelease sets
//     eps' = eps1 / sqrt(32 T log(2 / delta1)),  delta' = delta1 / (2 T L),
//     c_min = e^eps' / (e^eps' - 1),  theta = c_min / p_min,
//     noisy threshold theta_hat = theta + (4 / eps') log(1 / delta') + Lap(2 / eps'),
//   and PrefixQuery answers count_tau + Lap(4 / eps') > theta_hat. One trajectory (A = A1 o A2)
//   is (2 eps', delta1 / (2T))-DP (Thm. 5.3); T trajectories compose by advanced composition
//   (Dwork and Roth Cor. 3.21, slack delta1 / 2) to (eps1, delta1)-DP (Thm. 5.5). svt_params()
//   returns these pieces and the composed epsilon computed exactly from Thm. 3.20 (<= eps1
//   whenever eps1 <= 4 log(2/delta1), as the paper needs; reported so callers can check).
// Secure noise sources (NoiseSource::secure()): the Laplace draws lie on a power-of-two grid no
// coarser than the query sensitivity (1 for the count), so the coupling shifts of the proof
// (threshold + sensitivity, query + 2 sensitivity) are exact multiples of the grid and the claimed
// epsilon holds for the discrete noise at every eps' (the default grid of secure_sampling.hpp
// would be coarser than the count's sensitivity for eps' <= 2^-11).
// Validation (ParamError naming parameter and rule): eps1 > 0, delta1 in (0, 1), T >= 1, L >= 1,
// p_min in (0, 1]; AboveThreshold: epsilon > 0, sensitivity > 0, finite threshold.
#pragma once

#include <cstdint>
#include <string>

#include "engine/params.hpp"
#include "privacy/noise_source.hpp"

namespace dprl::privacy {

struct SvtParams {
  double epsilon1 = 1.0;  // expert-level budget of the data release
  double delta1 = 1e-5;
  std::int64_t queries = 1;     // T: trajectories examined (unstable query cutoff)
  std::int64_t max_length = 1;  // L: longest trajectory
  double p_min = 0.02;          // minimum action probability (Assumption 3.4; paper 000 uses 0.02)
  template <class V>
  void visit(V& v) {
    v("epsilon1", epsilon1, Range::positive(), "epsilon of the data release");
    v("delta1", delta1, Range::open(0, 1), "delta of the data release");
    v("queries", queries, Range::at_least(1), "T, trajectories examined");
    v("max_length", max_length, Range::at_least(1), "L, longest trajectory");
    v("p_min", p_min, Range::left_open(0, 1), "minimum action probability");
  }
};

struct SvtPieces {
  double eps_prime;    // per-query epsilon'
  double delta_prime;  // per-step delta'
  double c_min;
  double theta;
  double threshold_shift;         // (4 / eps') log(1 / delta')
  double threshold_noise_scale;   // Laplace scale 2 / eps'
  double query_noise_scale;       // Laplace scale 4 / eps'
  double per_trajectory_epsilon;  // 2 eps' (Thm. 5.3)
  double per_trajectory_delta;    // delta1 / (2T)
  double composed_epsilon;        // Thm. 3.20 over T trajectories, slack delta1 / 2
  double composed_delta;          // = delta1
};

SvtPieces svt_params(const SvtParams& p);
// The pieces as one line of JSON, every field by name (composed_epsilon "inf" when infinite):
// what `dprl privacy svt-params --json` prints and dprl.privacy.svt_params returns.
std::string svt_pieces_json(const SvtPieces& s);

// theta + threshold_shift + Lap(2 / eps') (Algorithm 2 line 8).
double noisy_threshold(const SvtPieces& s, NoiseSource& noise);
// Algorithm 1: count + Lap(4 / eps') > theta_hat.
bool prefix_query(double count, double theta_hat, const SvtPieces& s, NoiseSource& noise);

struct AboveThresholdParams {
  double epsilon = 1.0;
  double threshold = 0.0;
  double sensitivity = 1.0;
  template <class V>
  void visit(V& v) {
    v("epsilon", epsilon, Range::positive(), "epsilon of the whole query stream");
    v("threshold", threshold, Range::any(), "public threshold T");
    v("sensitivity", sensitivity, Range::positive(), "sensitivity of every query");
  }
};

// Dwork and Roth Algorithm 1. query() returns true at the first query above the noisy threshold;
// after that the instance is spent and further queries throw BudgetExceeded.
class AboveThreshold {
 public:
  AboveThreshold(AboveThresholdParams p, NoiseSource& noise);
  bool query(double value);
  bool halted() const { return halted_; }

 private:
  AboveThresholdParams p_;
  NoiseSource& noise_;
  double noisy_threshold_;
  bool halted_ = false;
};

}  // namespace dprl::privacy
