// Exact discrete Laplace and discrete Gaussian samplers, and the "secure" continuous-scale noise
// built on them.
//
// Why: textbook samplers (inverse-CDF Laplace, Box-Muller Gaussian) produce floating-point values
// whose set of reachable outputs depends on the input, so a released x + noise can reveal x
// exactly (Mironov 2012, "On significance of the least significant bits for differential
// privacy"). We follow Canonne, Kamath and Steinke 2020 ("The Discrete Gaussian for Differential
// Privacy", Algorithms 1-3): only integer arithmetic on uniform random bits, no floating point
// in the sampling, so the noise distribution is exact.
//   bernoulli_exp(n, d)       Bernoulli(exp(-n/d)) exactly (CKS Alg. 1), n, d integers, d < 2^120
//   discrete_laplace(t)       P(Y = y) proportional to exp(-|y| / t), t >= 1 integer (CKS Alg. 2)
//   discrete_gaussian(s)      P(Y = y) proportional to exp(-y^2 / (2 s^2)), 1 <= s < 2^28
//                             (CKS Alg. 3 with sigma^2 = s^2; a tail event of probability below
//                             e^-128 is rejected instead of evaluated, to stay inside 128 bits)
// Continuous scales are served on a power-of-two grid g: secure_laplace(b, g) = g *
// discrete_laplace(ceil(b / g)), secure_gaussian(sigma, g) = g * discrete_gaussian(ceil(sigma /
// g)), so the scale is rounded UP (never less noise) and outputs are exact multiples of g. Without
// a grid, g = secure_grid(scale) = 2^(floor(log2 scale) - 12): the rounding is below 2^-12.
//
// Snapping (plan_secure_release): a mechanism snaps its input to the grid (snap_to_grid) and adds
// this noise, so it releases only grid points whatever the input's low-order bits. Snapping moves
// each coordinate of each neighbour by at most g/2, so a d-dimensional query of sensitivity Delta
// has snapped sensitivity up to Delta + d g (L1) or Delta + sqrt(d) g (L2), NOT Delta + g.
// plan_secure_release picks, per release, the grid and the inflated scale that cover it:
//   g      = 2^(floor(log2 min(scale, Delta / c)) - 12), c = d (L1) or sqrt(d) (L2), made coarser
//            (doubled) only while the sampler would need more than max_ratio grid steps per scale;
//   scale' = scale (1 + c g / Delta) >= scale (Delta + c g) / Delta,
// so the inflation is at most 2^-12 unless the dimension is huge (then it is what the sampler's
// range allows, and ParamError when c scale / Delta itself exceeds that range).
// Guarantee: the discrete Laplace with scale t g on snapped inputs whose L1 distance is at most
// Delta + d g <= t g epsilon is epsilon-DP exactly. The discrete Gaussian is (k^2 / (2 s^2))-zCDP
// for an L2 distance of k grid steps (CKS 2020, Thm. 14, multivariate), the same concentrated-DP
// guarantee as the continuous Gaussian at noise multiplier sigma / Delta, so RDP accounting of
// unsampled gaussian(z) events stays valid for it. Poisson-subsampled releases of it are the
// event poisson_sampled(q, discrete_gaussian(z)), accounted with a bound proven for any mechanism
// of that RDP curve (rdp_accountant.hpp). Caveat: the (epsilon, delta) of the analytic Gaussian
// calibration and the PLD accountant on gaussian(z) events are those of the continuous Gaussian,
// which the discrete one matches closely (CKS 2020, sec. 2 and 5) but not with a proof we rely on
// here.
// Not covered: the gamma and Dirichlet samplers of NoiseSource use floating point in every mode
// (see noise_source.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace dprl::privacy {

using BitSource = std::function<std::uint64_t()>;

inline constexpr std::uint64_t kMaxDiscreteGaussianSigma = std::uint64_t{1} << 28;
// Largest scale / grid ratios the secure samplers accept: the discrete Gaussian's s = ceil(ratio)
// stays below 2^28; the discrete Laplace's samples stay far below 2^53 (exact in a double).
inline constexpr double kMaxSecureGaussianRatio = double(kMaxDiscreteGaussianSigma) - 2.0;
inline constexpr double kMaxSecureLaplaceRatio = 0x1p40;

// Single random bits from a BitSource's 64-bit words, low bit first. The samplers below draw
// bits through one of these: a Bernoulli(n / d) trial compares a uniform U in [0, 1) with n / d
// digit by digit and stops at the first difference, so it uses two bits on average instead of a
// whole word and a 128-bit division, and a uniform integer below n uses ceil(log2 n) bits per try.
class BitReader {
 public:
  explicit BitReader(const BitSource& words) : words_(words) {}
  bool bit() {
    if (left_ == 0) {
      word_ = words_();
      left_ = 64;
    }
    const bool b = (word_ & 1) != 0;
    word_ >>= 1;
    --left_;
    return b;
  }
  // A uniform integer of k bits, 1 <= k <= 64.
  std::uint64_t bits(int k);

 private:
  const BitSource& words_;
  std::uint64_t word_ = 0;
  int left_ = 0;
};

// Uniform integer in [0, n), n >= 1 (rejection, unbiased).
std::uint64_t uniform_below(std::uint64_t n, const BitSource& bits);
std::uint64_t uniform_below(std::uint64_t n, BitReader& bits);
// Bernoulli(n / d) exactly, 0 <= n <= d, d >= 1.
bool bernoulli_ratio(unsigned __int128 n, unsigned __int128 d, BitReader& bits);
// Bernoulli(exp(-n / d)), 1 <= d < 2^120.
bool bernoulli_exp(unsigned __int128 n, unsigned __int128 d, BitReader& bits);
bool bernoulli_exp(unsigned __int128 n, unsigned __int128 d, const BitSource& bits);
std::int64_t discrete_laplace(std::uint64_t t, BitReader& bits);
std::int64_t discrete_laplace(std::uint64_t t, const BitSource& bits);
std::int64_t discrete_gaussian(std::uint64_t s, BitReader& bits);
std::int64_t discrete_gaussian(std::uint64_t s, const BitSource& bits);

// The default grid for a continuous scale (> 0): 2^(floor(log2(scale)) - 12).
double secure_grid(double scale);
// value rounded to the nearest multiple of g (a power of two).
double snap_to_grid(double value, double g);
// Exact noise on the grid g (a normal power of two, scale / g in [1, max ratio above]; ParamError
// otherwise), and on the default grid.
double secure_laplace(double scale, double g, const BitSource& bits);
double secure_gaussian(double sigma, double g, const BitSource& bits);
// s = ceil(sigma / g), the discrete Gaussian's width in grid steps (validated as above).
std::uint64_t secure_gaussian_steps(double sigma, double g);
double secure_laplace(double scale, double g, BitReader& bits);
double secure_gaussian(double sigma, double g, BitReader& bits);
double secure_laplace(double scale, const BitSource& bits);
double secure_gaussian(double sigma, const BitSource& bits);

enum class SensitivityNorm { kL1, kL2 };

struct SecurePlan {
  double grid;       // g, a power of two
  double scale;      // the inflated scale scale' (the sampler rounds it up to a multiple of g)
  double inflation;  // scale' / scale = 1 + c g / Delta
  // statistical distance of one release's noise from the exact discrete Gaussian (the table
  // sampler, table_gaussian.hpp; 0 for Laplace and unsnapped releases): a record adds
  // (1 + e^epsilon) times its sum over the releases to delta (secure_release.hpp, sampler_delta)
  double sampler_tv = 0;
};
// The grid and inflated scale for releasing `dim` snapped coordinates with base noise `scale`
// calibrated to `sensitivity` in `norm` (see above). max_ratio: kMaxSecureLaplaceRatio or
// kMaxSecureGaussianRatio.
SecurePlan plan_secure_release(double scale, double sensitivity, std::size_t dim,
                               SensitivityNorm norm, double max_ratio);

}  // namespace dprl::privacy
