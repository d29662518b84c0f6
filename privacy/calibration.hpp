// Calibration: the smallest noise multiplier z that reaches a target epsilon.
//
// Problem: given (target epsilon, q, T, delta) and an accountant, find the smallest z with
// epsilon(z) <= target for T steps of the Poisson-subsampled Gaussian (DP-SGD, DP-FedAvg), under
// add/remove-one adjacency of the sampled unit (as in the accountants).
// epsilon(z) is non-increasing in z under both accountants (per-order RDP and the hockey-stick
// curves decrease with z), so bisection defines the answer: we bracket by doubling/halving from
// z = 1, bisect until the bracket is narrower than rel_tol * z (default 1e-10) and return the upper
// end, whose epsilon is verified <= target (never an under-noised z). The bisection is sped up
// by Illinois regula falsi steps on log(epsilon / target), with a bisection step whenever the
// bracket fails to halve in two steps (about 10-15 accountant calls instead of ~35).
// Validation (ParamError naming the parameter): target epsilon > 0 finite, q in (0, 1], T >= 1,
// delta in (0, 1), accountant in {rdp, pld, best}, rel_tol in (0, 0.1].
// If no z <= 1e6 reaches the target, ParamError says so.
#pragma once

#include <cstdint>
#include <string_view>

namespace dprl::privacy {

// Epsilon of T steps of the Poisson-subsampled Gaussian under the named accountant.
double dpsgd_epsilon(double noise_multiplier, double q, std::int64_t steps, double delta,
                     std::string_view accountant = "rdp");

double calibrate_noise_multiplier(double target_epsilon, double q, std::int64_t steps, double delta,
                                  std::string_view accountant = "rdp", double rel_tol = 1e-10);

// Throws ParamError unless the DP-SGD triple is valid (shared with the CLI).
void check_dpsgd_inputs(double q, std::int64_t steps, double delta);

}  // namespace dprl::privacy
