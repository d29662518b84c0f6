// The privacy-preserving teacher of paper 003 ("Privacy-Preserving Kickstarting Deep Reinforcement
// Learning with Privacy-Aware Learners", Gohari, Chen, Wu, Hale, Topcu): each query's policy p is
// floored onto the eta-restricted simplex and released through the Dirichlet mechanism
// (privacy/dirichlet_mechanism.hpp) with a decaying concentration, and every release is accounted.
//
// Per query (Algorithm T of our reading; the paper has no pseudo-code):
//   1. p~ = (1 - m eta) p + eta: lands in Delta_{m,eta} and scales the Lipschitz constant of the
//      policy map by (1 - m eta) (the paper assumes f maps into Delta_{m,eta} and never says how).
//   2. k_j = k0 c^j, j the schedule index (advance() after each episode or epoch; the first uses
//      k0). While k_j >= k_floor and the budget allows: answer x ~ Dirichlet(k_j p~).
//   3. Otherwise, for good: an input-independent answer (after_floor): one_hot (a uniformly random
//      action's vertex, default), uniform (1/m each), dirichlet_ones (Dirichlet(1, ..., 1)), or
//      none (no answer). It reads nothing of p, so it is (0, 0)-DP; the student sees k = 0.
//
// Guarantee (Theorem 1, eqs. 6 and 12), per query and only per query: with f the teacher's map
// from an observation to its floored policy, L-Lipschitz in L2 (L = (1 - m eta) * lipschitz, where
// lipschitz is a certified bound for observation -> softmax policy), one answer at k_j is
// (eps_j, delta_j)-DP for
//   neighbouring relation: two observations x, x' with ||x - x'||_2 <= b (b-adjacent, paper
//   Definition 1), the teacher network held fixed. This is NOT differential privacy of the data
//   the teacher was trained on: nothing bounds how a training record changes the network.
//   eps_j   = sqrt(m) L b k_j log(1/tau) + (m-1) lgamma(k_j eta) + lgamma(k_j (1 - (m-1) eta))
//             - m lgamma(k_j / m)                                                     (eq. 12)
//   delta_j = 1 - P(Dir_{k_j}([eta, ..., eta, 1 - (m-1) eta]) in Delta_{m,tau})          (eq. 6)
//             exact (Beta CDF) for m = 2; for m > 2 the Hoeffding upper end of a Monte Carlo
//             estimate (delta_samples draws, holds with probability >= 1 - delta_beta).
// Totals: basic composition over every private answer, (sum eps_j, sum delta_j) (Dwork and Roth
// 2014, Thm. 3.16, valid for adaptively chosen queries when each pair of corresponding
// observations is b-adjacent); flagged vacuous once sum delta_j >= 1, which at delta_j ~ 0.05
// happens after about 20 queries. Decaying k does not drive (eps_j, delta_j) to (0, 0): delta_j
// -> 1 and eps_j tends to a positive constant as k -> 0; only the input-independent answer is
// (0, 0).
// Budget (optional): a private answer whose cost would push either total past budget_epsilon or
// budget_delta is not given; the teacher switches to the input-independent answer for good.
//
// | param          | default  | range        | meaning                                        |
// |----------------|----------|--------------|------------------------------------------------|
// | k0             | 5        | (0, inf)     | initial concentration (paper: 5)               |
// | decay          | 1        | (0, 1]       | c: k <- c k at each advance()                  |
// | k_floor        | 0.01     | [0, inf)     | below it: the input-independent answer         |
// | after_floor    | one_hot  | see above    | the input-independent answer                   |
// | eta            | 0.05     | [0, 1/m)     | floor of every entry of p~                     |
// | tau            | 0.001    | (0, eta]     | output region Delta_{m,tau} of eq. 12          |
// | adjacency      | 0.01     | (0, inf)     | b, in raw observation units                    |
// | lipschitz      | 1        | (0, inf)     | certified L of observation -> softmax policy   |
// | actions        | 2        | [2, inf)     | m                                              |
// | budget_epsilon | 0        | [0, inf)     | total epsilon budget (0: none)                 |
// | budget_delta   | 0        | [0, 1)       | total delta budget (0: none)                   |
// | delta_samples  | 100000   | [1000, 1e9]  | Monte Carlo draws per k for m > 2              |
// | delta_beta     | 1e-6     | (0, 0.5)     | Hoeffding failure probability                  |
// Validation at construction: ParamError naming the key and the rule.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/params.hpp"
#include "privacy/noise_source.hpp"

namespace dprl {
class StateIo;
}

namespace dprl::privacy {

struct DirichletTeacherParams {
  double k0 = 5.0;
  double decay = 1.0;
  double k_floor = 0.01;
  std::string after_floor = "one_hot";
  double eta = 0.05;
  double tau = 0.001;
  double adjacency = 0.01;
  double lipschitz = 1.0;
  int actions = 2;
  double budget_epsilon = 0;
  double budget_delta = 0;
  std::int64_t delta_samples = 100000;
  double delta_beta = 1e-6;

  template <class V>
  void visit(V& v) {
    v("k0", k0, Range::positive(), "initial Dirichlet concentration k");
    v("decay", decay, Range::left_open(0, 1), "vanishing coefficient c: k <- c k");
    v("k_floor", k_floor, Range::non_negative(), "below it the answer is input-independent");
    v("after_floor", after_floor, Choices{{"one_hot", "uniform", "dirichlet_ones", "none"}},
      "the input-independent answer");
    v("eta", eta, Range::right_open(0, 0.5), "floor of every entry of the released policy");
    v("tau", tau, Range::left_open(0, 0.5), "output region Delta_{m,tau} of eq. 12");
    v("adjacency", adjacency, Range::positive(), "b: observation distance of the relation");
    v("lipschitz", lipschitz, Range::positive(), "certified L of observation -> policy");
    v("actions", actions, Range::at_least(2), "number of actions m");
    v("budget_epsilon", budget_epsilon, Range::non_negative(), "total epsilon budget (0: none)");
    v("budget_delta", budget_delta, Range::right_open(0, 1), "total delta budget (0: none)");
    v("delta_samples", delta_samples, Range::closed(1000, 1e9), "Monte Carlo draws (m > 2)");
    v("delta_beta", delta_beta, Range::open(0, 0.5), "Monte Carlo failure probability");
  }
  void check() const;  // eta < 1/m, tau <= eta
};

// The cost of one private answer at schedule index j.
struct QueryCost {
  double k = 0;
  double epsilon = 0;         // eq. 12
  double delta = 0;           // eq. 6: exact (m = 2) or the certified Monte Carlo upper end
  double delta_estimate = 0;  // the point estimate (equal to delta when exact)
  bool delta_exact = false;
  std::int64_t queries = 0;  // private answers given at this k
};

// (epsilon, delta) of one query at k for the given params (k overrides k0).
QueryCost dirichlet_query_cost(const DirichletTeacherParams& p, double k, NoiseSource& mc_noise);

// p~ = (1 - m eta) p + eta (out may alias p).
void eta_floor(std::span<const double> p, double eta, std::span<double> out);

class DirichletTeacher {
 public:
  // mc_noise: the stream for the Monte Carlo delta (not privacy noise; kept apart from the
  // answers' noise so the accounting never changes the released answers).
  DirichletTeacher(const DirichletTeacherParams& p, NoiseSource& mc_noise);

  struct Answer {
    double k = 0;           // the concentration used; 0 for an input-independent answer
    bool given = true;      // false: after_floor = none, no answer
    bool private_ = false;  // true: a Dirichlet release of p, accounted
  };
  // Answers one query with policy p (m entries, a probability vector) into out.
  Answer answer(std::span<const double> p, std::span<double> out, NoiseSource& noise);
  // Moves to the next schedule index (k <- c k).
  void advance();

  // k of the next private answer (0 once switched to input-independent answers).
  double current_k() const;
  bool budget_exhausted() const { return budget_exhausted_; }
  std::int64_t queries() const { return queries_; }
  std::int64_t private_queries() const { return private_queries_; }
  std::int64_t switched_at_query() const { return switched_at_; }  // -1 if never
  double epsilon_total() const { return eps_sum_; }
  double delta_total() const { return delta_sum_; }  // may exceed 1: vacuous
  bool vacuous() const { return delta_sum_ >= 1.0; }
  // The costs of the schedule indices that answered privately, in order.
  std::vector<QueryCost> used_costs() const;
  const DirichletTeacherParams& params() const { return p_; }
  // Saves or loads the schedule position, the budget spent and the query costs computed so far
  // (run checkpoints; the Monte Carlo noise source is saved by its owner).
  void sync_state(StateIo& io);

 private:
  const QueryCost& current_cost();  // of schedule index j_, computed on first use
  void input_independent(std::span<double> out, NoiseSource& noise) const;

  DirichletTeacherParams p_;
  NoiseSource& mc_noise_;
  std::size_t j_ = 0;
  double k_;
  bool switched_ = false;
  bool budget_exhausted_ = false;
  std::int64_t switched_at_ = -1;
  std::int64_t queries_ = 0, private_queries_ = 0;
  double eps_sum_ = 0, delta_sum_ = 0;
  std::vector<QueryCost> costs_;  // by schedule index, computed on first use
  std::vector<bool> have_cost_;
  std::vector<double> alpha_;
};

// The "paper-matched" reading: with the run's eta and m, the tau whose delta at k0 is at most
// target_delta (as close as a bisection gets), then the b with epsilon(k0) = target_epsilon
// (paper: (4.46, 0.05) at k0 = 5). attainable is false when no b > 0 reaches target_epsilon
// (the lgamma part of eq. 12 alone exceeds it) or no tau in (0, eta] reaches target_delta.
struct PaperMatched {
  bool attainable = false;
  double tau = 0;
  double adjacency = 0;
  double delta_k0 = 0;
  double lgamma_part_k0 = 0;
  std::string note;
};
PaperMatched paper_matched(const DirichletTeacherParams& p, double target_epsilon,
                           double target_delta, NoiseSource& mc_noise);

}  // namespace dprl::privacy
