// The largest number of DP-SGD steps a privacy budget affords.
//
// Problem: given the noise multiplier z, the sampling rate q (Poisson subsampling of the privacy
// unit: record, trajectory, user or expert), the budget (epsilon, delta) and an accountant, find
// the largest N with epsilon(z, q, N, delta) <= epsilon: "train until the budget is spent" (paper
// 000, Sharma et al., "Preserving Expert-Level Privacy in Offline Reinforcement Learning", TMLR,
// sec. 6: "we allow all DP-SGD training runs to progress until the privacy budget is used up").
// Guarantee: the returned N satisfies epsilon(N) <= budget as computed by the named accountant
// (every N it returns has been evaluated and checked), and N + 1 exceeds it, unless N reached
// max_steps. epsilon(N) is non-decreasing in N under every accountant here (composition only adds
// privacy loss), so bisection over the integers defines the answer: the bracket is found by
// doubling from 1, then bisected to width one (about 2 log2 N accountant evaluations; each PLD
// evaluation composes by FFT, so its cost barely grows with N).
// Neighbouring relation: add/remove one unit, as the accountants (accountant.hpp).
// Validation (ParamError naming the parameter and rule): z > 0 finite, q in (0, 1], epsilon > 0
// finite, delta in (0, 1), max_steps >= 1, known accountant.
#pragma once

#include <cstdint>
#include <string_view>

namespace dprl::privacy {

struct StepsWithinBudget {
  std::int64_t steps = 0;  // largest N with epsilon(N) <= budget (0: not even one step)
  double epsilon = 0;      // epsilon(steps) (0 when steps = 0)
  int evaluations = 0;     // accountant evaluations used
  bool capped = false;     // steps == max_steps and the budget may afford more
};

StepsWithinBudget steps_within_budget(double noise_multiplier, double q, double epsilon_budget,
                                      double delta, std::string_view accountant = "pld",
                                      std::int64_t max_steps = std::int64_t{1} << 40);

}  // namespace dprl::privacy
