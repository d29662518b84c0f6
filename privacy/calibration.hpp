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
// Inputs are named fields (CalibrationSpec, DpsgdSpec in dp_event.hpp), so that the several doubles
// cannot be swapped silently.
// Validation (ParamError naming the field): target_epsilon > 0 finite, sampling_rate in (0, 1],
// steps >= 1, delta in (0, 1), accountant a registered name (accountant.hpp), rel_tol in
// (0, 0.1].
// If no z <= 1e6 reaches the target, ParamError says so.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

#include "privacy/accountant.hpp"
#include "privacy/dp_event.hpp"

namespace dprl::privacy {

// Epsilon of T steps of the Poisson-subsampled Gaussian under the named accountant:
//   dpsgd_epsilon({.noise_multiplier = 1.1, .sampling_rate = 0.01, .steps = 1000}, 1e-5, "pld")
double dpsgd_epsilon(const DpsgdSpec& spec, double delta, std::string_view accountant = "rdp");

// What calibrate_noise_multiplier solves for; an omitted number is NaN or 0 and fails validate().
struct CalibrationSpec {
  double target_epsilon = NAN;
  double delta = NAN;
  double sampling_rate = NAN;  // Poisson rate q
  std::int64_t steps = 0;      // T
  void validate() const;       // ParamError naming the field
};

// The smallest z with dpsgd_epsilon({z, q, T}, delta, accountant) <= target_epsilon:
//   calibrate_noise_multiplier({.target_epsilon = 2, .delta = 1e-5, .sampling_rate = 0.01,
//                               .steps = 1000}, "pld")
double calibrate_noise_multiplier(const CalibrationSpec& spec, std::string_view accountant = "rdp",
                                  double rel_tol = 1e-10);

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

}  // namespace dprl::privacy
