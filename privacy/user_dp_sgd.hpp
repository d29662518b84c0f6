// User-level DP-SGD: DP-SGD whose privacy unit is a user of a dataset (an expert, a person, a
// trajectory: whatever the dataset's user_id stands for), not a single record.
//
// Source: Abadi et al. 2016, "Deep Learning with Differential Privacy" (CCS), Algorithm 1, with
// the user as the sampled unit as in Sharma et al., "Preserving Expert-Level Privacy in Offline
// Reinforcement Learning" (TMLR), Algorithm 4 (expert-level DP-SGD), and McMahan et al. 2018,
// "Learning Differentially Private Recurrent Language Models" (ICLR) for user-level sampling.
//
// One step, with m distinct users, expected batch b, q = b / m, clip norm C, noise multiplier z:
//   1. each user is sampled independently with probability q (Poisson sampling);
//   2. each sampled user u contributes k transitions (k = contribution; k = 1 as paper 000);
//   3. its gradient g_u = (1/k) sum_j grad loss(x_j) over ALL trained parameters of the learner
//      (several networks: one joint L2 norm, one clip factor);
//   4. g_u is clipped: c_u = min(1, C / U_u) with U_u a proven upper bound on the exact |g_u|_2
//      (the computed norm plus its rounding bound, below), so |c_u g_u| <= C exactly; c_u = 0 when
//      the norm is NaN or infinite (the zero vector: still within C, no abort);
//   5. release G = (sum_u c_u g_u + N(0, (z C')^2 I)) / b with C' = C (1 + beta) the sensitivity
//      of the computed sum (below); divide by the expected, not the realised, batch size, so the
//      normaliser carries no information.
// Values computed from other released quantities (target networks, Adam moments, the policy) are
// post-processing.
//
// Guarantee: each step is the Poisson-subsampled Gaussian mechanism with sampling rate q and noise
// multiplier z on a sum whose L2 sensitivity is C' = C (1 + beta): adding or removing ONE USER
// together with ALL of their data changes the exact sum of clipped per-user gradients by at most
// C (the user is absent or present in the sample; their k transitions enter through one clipped
// vector), and the computed sum by at most C plus the rounding of both neighbours' sums. N steps
// compose as DpEvent dpsgd_event({z, q, N}), accounted by an Accountant (PLD by default) through
// the Ledger; the run is (epsilon, delta)-DP under add/remove-one-user adjacency with unit = the
// dataset's user. Validity: the guarantee assumes the sampling and the noise are secret (OS
// entropy); seeded noise gives a reproducible run that is NOT formally private (anyone with the
// seed can subtract the noise). The release rule is the caller's (GaussianRelease): the offline
// learners use secure_release.hpp's add_gaussian_release with OS-entropy noise, which snaps the sum
// to the discrete sampler's grid g and raises the noise std to cover the snapped sensitivity C +
// sqrt(n) g (n noised values); the noise std passed here must be at least z times the sensitivity
// of what release() sees.
//
// Rounding, covered: the release is computed from float errors and activations; the norms and
// the sum's bounds are in double (u = 2^-53, gamma_n = n u / (1 - n u)) unless said otherwise:
//   - the norms: for k = 1 the squared norm is a product of float sums of squares (an error
//     column below 2^-60, where squares may underflow, summed again in double), within a relative
//     gamma_(n + 4) (u = 2^-24, n the longest column), and U_u = sqrt(computed (1 + 3
//     gamma)); for k > 1 the products are exact in double and the computed |sum_j g_j|^2 is
//     within gamma_M S_u^2 of the exact one (S_u = sum_j |g_j| over the user's transitions, M the
//     longest dot product plus the k^2 L terms summed), and U_u = sqrt(computed + gamma_M S_u^2).
//     Either way U_u bounds the exact norm, so c_u |g_u| <= C exactly;
//   - the sum: each entry of the weighted product of N k columns is within gamma_(N k + 2)
//     sum_i w_i |delta_i| |a_i| of the exact one; over all layer blocks (Minkowski) the vector is
//     within gamma_(N k + 2) sum_u c_u S_u / k. For k = 1, S_u = |g_u| and c_u S_u <= C; for
//     k > 1 the factor is capped so that c_u S_u / k <= R C (R = 64, cancellation_ratio(): a user
//     whose transitions cancel more than R-fold (mean transition norm over the norm of the mean;
//     about sqrt(k) for directions at random) is scaled down further, which only shrinks its
//     vector).
// With N <= m + 1 sampled users (the larger neighbour), one neighbour's computed sum is within
// e_d C of the exact one, e_d = gamma_((m+1) k + 2) (m + 1) R (double_sum_error()).
// Float sums (k = 1): a step with at most N_f = float_sum_cap() sampled users (a public figure from
// b) forms its products in float chunks (nn::SumArithmetic::kFloatChunks; any other step in
// double). Its weighted errors are rounded toward zero to float, s_u with |s_u| <= (1 + 2^-53)
// c_u |delta_u| entrywise (so sum_u |s_u| |a_u| has norm at most (1 + 2^-53) C per user); each
// entry is within gamma^f_(64 + J) sum_u |s_u| |a_u| of the exact sum over the s_u (u = 2^-24,
// J = ceil(N_f / 64) chunks), plus N_f 2^-124 per entry for underflow (2^20 N_f 2^-124 over at
// most 2^40 entries). That exact sum is not the double path's exact sum sum_u c_u g_u: each
// user's s_u differs from c_u delta_u by less than 2^-23 relative (two more float roundings), or
// 2^-126 absolute per entry where it underflows, times |a_u| < 2^64 (a finite squared norm), so
// against sum_u c_u g_u, the reference of both arithmetics, one neighbour's float sum is within
// e_f C, e_f = gamma^f_(66 + J) N_f (1 + 2^-20) + N_f (2^-104 + 2^-42) / C (float_sum_error():
// 1.7e-3 at b = 256).
// Two neighbours' computed sums (each in whichever arithmetic its own user count picks) differ by
// at most C' = C (1 + beta), beta = 2 max(e_d, e_f) (1 + 2^-20) (e_f only when float sums are
// used; accumulation_error(): 2.2e-10 at m = 10^3 in double alone, 3.4e-3 at b = 256 with float
// sums), and the noise std is z C' (sensitivity()): the stated relation holds for the computed
// release, not only for exact arithmetic. Float sums are taken only when 2 e_f (1 + 2^-20) <= 0.005
// (b up to about 400); `sum: double` (float_sums = false) keeps every step in double. m is the public user count; with public_users = M the dataset must have at most M
// users (the offline learners refuse it otherwise). validate() refuses beta > kMaxAccumulationError
// = 0.01 (m above about 6.7 10^6 for k = 1).
//
// | field            | range          | meaning                                              |
// |------------------|----------------|------------------------------------------------------|
// | noise_multiplier | (0, 1e6]       | z: noise std on the sum is z * C                     |
// | clip_norm        | [1e-100, inf)  | C: bound on each sampled user's gradient (smaller C  |
// |                  |                | could underflow the scaled errors in double)         |
// | expected_batch   | (0, m]         | b: expected number of sampled users per step         |
// | num_users        | >= 1           | m: distinct users in the dataset                     |
// | contribution     | [1, 1e6]       | k: transitions per sampled user                      |
// ParamError names the field and rule on any violation (q = b / m must be in (0, 1]).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/nn/nn_mlp.hpp"
#include "engine/run_dir.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/secure_release.hpp"

namespace dprl {
class HelperThread;
}

namespace dprl::privacy {

struct UserDpSgdConfig {
  double noise_multiplier = 1.0;
  double clip_norm = 1.0;
  double expected_batch = 1.0;
  std::int64_t num_users = 1;
  int contribution = 1;
  // The release adds exact discrete Gaussian noise (secure noise): the step event is then
  // poisson_sampled(q, discrete_gaussian(z)), accounted with a bound proven for the discrete
  // Gaussian (rdp_accountant.hpp), not the continuous curve.
  bool discrete = false;

  // Throws ParamError naming the field and rule.
  void validate() const;
  double sampling_rate() const { return expected_batch / static_cast<double>(num_users); }
  // The event of one step: poisson_sampled(q, gaussian(z)), or discrete_gaussian(z) inside.
  DpEvent step_event() const;
  // The largest rounding allowance validate() accepts (the noise std then grows by at most 1%).
  static constexpr double kMaxAccumulationError = 0.01;
  // R of the rounding bound above: 1 for k = 1, 64 for k > 1.
  double cancellation_ratio() const;
  // Float sums (above): allowed unless this is false (configuration `sum: double`).
  bool float_sums = true;
  // The largest float-sum allowance taken: above it every step sums in double.
  static constexpr double kMaxFloatSumError = 0.005;
  // N_f: a step with at most this many sampled users may sum in float chunks: ceil(b + 8 sqrt(b)
  // + 8), at most m + 1 (a Poisson batch exceeds it with probability below 10^-12).
  std::int64_t float_sum_cap() const;
  // One neighbour's rounding error over C: e_d in double (up to m + 1 users), e_f in float chunks
  // (up to N_f users; k = 1).
  double double_sum_error() const;
  double float_sum_error() const;
  // Whether steps of at most N_f users sum in float chunks: float_sums, k = 1, 2 e_f within
  // kMaxFloatSumError, and N_f C far from float's range (no overflow).
  bool uses_float_sums() const;
  // The arithmetic of a step with `users` sampled users.
  nn::SumArithmetic step_arithmetic(int users) const;
  // beta above: the relative rounding allowance of the computed sum (both neighbours, either
  // arithmetic).
  double accumulation_error() const;
  // C' = C (1 + beta), the L2 sensitivity of the computed sum; the noise std is z C'.
  double sensitivity() const;
};

// One trained network of the learner: its shape, the cache holding per-example errors of the
// batch (after backward_errors with per-example, not averaged, loss gradients), and its gradient
// buffer (num_params floats, overwritten).
struct DpNetGrad {
  const nn::MlpShape* shape;
  const nn::MlpCache* cache;
  float* grad;
};

// Diagnostics of one step (never published by a private run: they depend on the data without
// noise).
struct UserDpStepStats {
  int users = 0;         // sampled users
  double mean_norm = 0;  // mean finite per-user gradient norm before clipping
  int clipped = 0;       // users whose norm exceeded C
  int dropped = 0;       // users whose norm was not finite (clip factor 0)
};

// Adds independent N(0, sd^2) noise to every value of x, the released vector (the caller's
// release rule: NoiseSource::add_gaussian, or a secure release that snaps x to the sampler's grid
// first and covers the snapping with a larger sd).
using GaussianRelease = std::function<void(std::span<double> x, double sd)>;

// Steps 3-5 above for `users` sampled users whose k = cfg.contribution transitions are columns
// [u k, (u + 1) k) of every cache: joint per-user norms over all nets (double), clip factors,
// the weighted sum into each grad, then release(sum, noise_sd) on every real parameter (the layer
// blocks, in net, layer, weight-then-bias order) and the division by b. noise_sd must be at least
// z times the sensitivity of the released sum (sensitivity(), or more when the release snaps).
// users = 0 releases pure noise. A user whose norm is not finite (a NaN or infinite loss, or a
// gradient too large for float) gets the clip factor 0 and contributes exactly zero: the run never
// stops or changes its output because of one user's data, and the count is only in the returned
// stats.
// A helper (optional) shares the double products of large layers (nn::accumulate_grad_f64; the
// values do not depend on it).
UserDpStepStats user_dp_gradient(const UserDpSgdConfig& cfg, std::span<const DpNetGrad> nets,
                                 int users, double noise_sd, const GaussianRelease& release,
                                 HelperThread* helper = nullptr);
// The same with noise.add_gaussian and noise_sd = z C' (z sensitivity()).
UserDpStepStats user_dp_gradient(const UserDpSgdConfig& cfg, std::span<const DpNetGrad> nets,
                                 int users, NoiseSource& noise);

// The number of noised values per step (real parameters of the nets, padding excluded).
std::size_t noised_values(std::span<const DpNetGrad> nets);

// The release of one step: gaussian_release_plan with std z C' on sensitivity C' (C' =
// cfg.sensitivity()), secure (snapped to the sampler's grid, std raised to cover it) or not.
SecurePlan user_dp_release_plan(const UserDpSgdConfig& cfg, std::size_t noised_values, bool secure);

// The guarantee record of a user-level DP-SGD run (summary.json "privacy").
struct UserDpReportInput {
  UserDpSgdConfig cfg;
  std::int64_t steps = 0;
  double epsilon = 0;
  double delta = 0;
  std::string accountant;
  std::string unit;          // the dataset's unit (expert, trajectory, person, user)
  std::string noise_source;  // NoiseSource::name()
  bool seeded = false;       // seeded noise: reproducible, not formal
  double noise_sd = 0;       // the std of the noise on the sum (z C', more for a snapped release)
  double sampler_tv = 0;     // per step: SecurePlan::sampler_tv of the release (0 when seeded)
  std::vector<std::string> covers;
  std::string extra_json;  // more fields for details ({} text or "")
};
PrivacyReport user_dp_report(const UserDpReportInput& in);

}  // namespace dprl::privacy
