// Calibration: the smallest noise multiplier z that reaches a target epsilon, and the largest
// number of steps a budget allows.
//
// Problem: given (target epsilon, q, T, delta) and an accountant, find the smallest z with
// epsilon(z) <= target for T steps of the Poisson-subsampled Gaussian (DP-SGD, DP-FedAvg), under
// add/remove-one adjacency of the sampled unit (as in the accountants).
// epsilon(z) is non-increasing in z under both accountants (per-order RDP and the hockey-stick
// curves decrease with z), so bisection defines the answer: we bracket by doubling/halving from
// z = 1, bisect until the bracket is narrower than rel_tol * z (default 1e-10) and return the upper
// end, whose epsilon is verified <= target (never an under-noised z). The bisection is sped up
// by Illinois regula falsi steps on log(epsilon / target), with a bisection step whenever the
// bracket fails to halve in two steps (about 10-15 accountant calls instead of ~35); both are
// privacy/root_finding.hpp. A NaN epsilon counts as not meeting the target.
// Validation (ParamError naming the parameter): target epsilon > 0 finite, q in (0, 1], T >= 1,
// delta in (0, 1), accountant in {rdp, pld, best}, rel_tol in (0, 0.1].
// If no z <= 1e6 reaches the target, ParamError says so.
#pragma once

#include <cstdint>
#include <string_view>

#include "privacy/accountant.hpp"
#include "privacy/dp_event.hpp"

namespace dprl::privacy {

// Epsilon of T steps of the Poisson-subsampled Gaussian under the named accountant.
double dpsgd_epsilon(double noise_multiplier, double q, std::int64_t steps, double delta,
                     std::string_view accountant = "rdp");

double calibrate_noise_multiplier(double target_epsilon, double q, std::int64_t steps, double delta,
                                  std::string_view accountant = "rdp", double rel_tol = 1e-10);

// The largest number of steps N in [0, max_steps] such that `spent` (what has been spent so far;
// pass a fresh accountant for a whole budget) with `step` composed N more times stays within
// budget_epsilon at delta. Epsilon is non-decreasing in N (composition), so N is found by doubling
// from 1 and then bisecting over integers: about 2 log2(N) accountant evaluations (RDP: a fraction
// of a millisecond each; PLD: a full FFT composition each). Returns 0 when `spent` alone already
// exceeds the budget, max_steps when that many fit. The accountant's add/remove-one relation
// applies. ParamError: budget_epsilon finite and > 0, delta in (0, 1), max_steps >= 0, events
// the accountant cannot account.
std::int64_t steps_within_budget(const DpEvent& step, double budget_epsilon, double delta,
                                 const Accountant& spent,
                                 std::int64_t max_steps = std::int64_t{1} << 53);
// The same from nothing spent, under the named accountant.
std::int64_t steps_within_budget(const DpEvent& step, double budget_epsilon, double delta,
                                 std::string_view accountant = "rdp",
                                 std::int64_t max_steps = std::int64_t{1} << 53);

// Throws ParamError unless the DP-SGD triple is valid (shared with the CLI).
void check_dpsgd_inputs(double q, std::int64_t steps, double delta);

}  // namespace dprl::privacy
