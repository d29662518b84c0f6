// Exact discrete Laplace and discrete Gaussian samplers, and the "secure" continuous-scale noise
// built on them.
//
// Why: textbook samplers (inverse-CDF Laplace, Box-Muller Gaussian) produce floating-point values
// whose set of reachable outputs depends on the input, so a released x + noise can reveal x
// exactly (Mironov 2012, "On significance of the least significant bits for differential
// privacy"). We follow Canonne, Kamath and Steinke 2020 ("The Discrete Gaussian for Differential
// Privacy", Algorithms 1-3): only integer arithmetic on uniform random bits, no floating point
// in the sampling, so the noise distribution is exact.
//   bernoulli_exp(n, d)       Bernoulli(exp(-n/d)) exactly (CKS Alg. 1), n, d integers
//   discrete_laplace(t)       P(Y = y) proportional to exp(-|y| / t), t >= 1 integer (CKS Alg. 2)
//   discrete_gaussian(s)      P(Y = y) proportional to exp(-y^2 / (2 s^2)), 1 <= s < 2^14
//                             (CKS Alg. 3 with sigma^2 = s^2)
// Continuous scales are served on a power-of-two grid g = secure_grid(scale) = 2^(floor(log2
// scale) - 12): secure_laplace(b) = g * discrete_laplace(ceil(b / g)), secure_gaussian(sigma) =
// g * discrete_gaussian(ceil(sigma / g)), so the scale is rounded UP (never less noise) by at most
// a factor 1 + 2^-12. Outputs are exact multiples of g.
// Guarantee: a mechanism that snaps its input to the same grid (snap_to_grid) and adds this noise
// releases only grid points; snapping moves a value by at most g/2, so the sensitivity becomes
// Delta + g, which the mechanisms cover by inflating the scale by (1 + g / Delta) (see
// laplace_mechanism.hpp, gaussian_mechanism.hpp). The discrete Laplace with t = scale/g on
// integer sensitivity k is (k / t)-DP exactly; the discrete Gaussian is (k^2 / (2 s^2))-zCDP,
// the same concentrated-DP guarantee as the continuous Gaussian (CKS 2020, sec. 2), so RDP
// accounting of unsampled gaussian(z) events stays valid for it. Caveat: for Poisson-subsampled
// events and for the PLD accountant the accounting is that of the continuous Gaussian, which
// the discrete one matches closely (CKS 2020, sec. 5) but not with a proof we rely on here.
#pragma once

#include <cstdint>
#include <functional>

namespace dprl::privacy {

using BitSource = std::function<std::uint64_t()>;

// Uniform integer in [0, n), n >= 1 (rejection, unbiased).
std::uint64_t uniform_below(std::uint64_t n, const BitSource& bits);
// Bernoulli(exp(-n / d)), d >= 1.
bool bernoulli_exp(unsigned __int128 n, unsigned __int128 d, const BitSource& bits);
std::int64_t discrete_laplace(std::uint64_t t, const BitSource& bits);
std::int64_t discrete_gaussian(std::uint64_t s, const BitSource& bits);

// The grid used for a continuous scale (> 0): 2^(floor(log2(scale)) - 12).
double secure_grid(double scale);
// value rounded to the nearest multiple of g.
double snap_to_grid(double value, double g);
double secure_laplace(double scale, const BitSource& bits);
double secure_gaussian(double sigma, const BitSource& bits);

}  // namespace dprl::privacy
