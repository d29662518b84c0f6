// The joint-DP construction of private LSVI-UCB and LSVI-UCB+ (algos/lsvi/lsvi_ucb.hpp): the
// release channels and their L2 sensitivities under the neighbouring relation, the calibration of
// their noise on an accountant, and the binary-tree mechanism that releases the Gram matrices.
//
// Unit: one user = one episode of H steps. Neighbouring (`neighbouring`): "replace" (default, the
// usual joint-DP relation of Vietri et al. 2020: the user sequences differ in one user's whole
// episode) or "add-remove" (one user's episode present or absent). Assumptions, checked by
// LinearMdpModel::validate (to 1e-9): ||phi(s, a)|| <= 1 and r in [0, 1]; the learner clamps
// every value table it regresses on to [0, H] (V and, for plus, Vc; Q_h <= H - h + 1 with
// clip = remaining), and the plus weights are 1 / sigma_bar^2 <= 1 / H (sigma_bar >= sqrt(H)).
// Sensitivities (over the H steps released together; per step, then sqrt(H) over steps):
//   Gram (upper triangles of sum w phi phi^T):
//     add-remove: ||UT(w phi phi^T)||_2 <= ||w phi phi^T||_F = w ||phi||^2 <= w_max
//     replace:    D = w phi phi^T - w' psi psi^T; ||UT(D)||^2 = (||D||_F^2 + sum_i D_ii^2) / 2
//                 <= ||D||_F^2 = w^2 ||phi||^4 + w'^2 ||psi||^4 - 2 w w' (phi.psi)^2 <= 2 w_max^2,
//                 so sqrt(2) w_max (attained by phi = e_1, psi = e_2)
//     with w_max = 1 (lsvi_ucb) or 1 / H (plus): sqrt(H) g_r w_max, g_r = 1 or sqrt(2).
//   Targets (sum w phi y with |y| <= Y; the triangle inequality, attained by opposite y):
//     lsvi_ucb: y = r + V in [0, H + 1]: sqrt(H) (H + 1) r_r, r_r = 1 (add-remove) or 2 (replace)
//     plus:     r + V and r + Vc: sqrt(H) (H + 1) / H r_r; V^2 in [0, H^2]: sqrt(H) H r_r.
// Secure noise snaps every released element to the sampler's grid g, planned per channel
// (privacy/secure_release.hpp: gaussian_release_plan); the snapped sensitivity adds sqrt(n) g for
// the n elements one user can change (H times the
// entries a user's features touch: k (k + 1) / 2 Gram entries and k target entries per step for
// features with at most k non-zeros, twice that under replace, at most the whole vector).
// Calibration: every release is a Gaussian mechanism; the planned run composes to a Gaussian with
// mu^2 = sum count / z^2 (Dong, Roth and Su 2019, exact for adaptive composition), split equally
// between channels (z_c = c sqrt(n count_c)); c starts at the exact answer 1 / mu and grows until
// the accountant certifies (epsilon, delta), then bisects.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/eigen_abi.hpp"
#include "engine/run_dir.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/release_tap.hpp"
#include "privacy/secure_release.hpp"

namespace dprl::algos {
struct LsviUcbParams;
}

namespace dprl {
class StateIo;
}

namespace dprl::algos::lsvi {

// One release channel: `count` Gaussian releases of a vector with L2 sensitivity `sens` (before
// snapping) of which `coords` elements can differ between neighbours.
struct Channel {
  std::string name;
  std::int64_t count = 0;
  double sens = 0;
  double coords = 0;
  double z = 0;         // noise multiplier against sens_eff (calibrate)
  double sigma = 0;     // noise standard deviation per element (calibrate)
  double grid = 0;      // the secure release's snapping grid; 0 unless secure (calibrate)
  double sens_eff = 0;  // sensitivity of the snapped vector: sens unless secure (calibrate)
  // the channel's releases at (sigma, grid), on the table sampler when secure (calibrate)
  privacy::RepeatedGaussianRelease release{};
};

struct ChannelPlan {
  bool plus = false;
  bool replace = true;
  int H = 1, d = 1;
  int support = 1;  // at most this many non-zero features per (s, a)
  int levels = 1;   // tree levels: Gram releases per user
  std::int64_t updates = 1;
};

// The update schedule. Static: B batches, by default Luyo et al.'s
// B = ceil((K epsilon)^(2/5) d^(3/5) H^(1/5)) (epsilon = 1 when not private). Adaptive: at most
// U_max updates, by default the determinant-doubling bound
// d H log2(1 + n_max / (d lambda_eff)) + 1, with n_max = K (K / H for plus, whose weights are at
// most 1 / H) and lambda_eff the smallest eigenvalue the (private) Gram matrices can have: lambda
// plus the positive-definite shift, which depends only on the tree (not on U_max), so the bound
// is computed once.
struct Schedule {
  std::int64_t batch_len = 1;    // episodes per static batch (1 otherwise)
  std::int64_t reads = 0;        // tree leaves: where Lambda~ is read
  int levels = 1;                // floor(log2 reads) + 1
  std::int64_t max_updates = 1;  // planned policy updates
  double shift_per_sigma = 0;    // Upsilon / s_G
};
Schedule plan_schedule(const LsviUcbParams& p, std::int64_t K, int d, int H, double lambda);

// L2 sensitivity of the Gram channel (over the H steps) under the relation.
double gram_sensitivity(bool plus, int H, bool replace);
// The channels of a private run: gram first, then the target channels.
std::vector<Channel> make_channels(const ChannelPlan& plan);
// Sets z (equal shares, certified by the accountant for the planned counts), then sigma and
// sens_eff for the noise source (secure: covers the snapping).
void calibrate(std::vector<Channel>& channels, double epsilon, double delta,
               const std::string& accountant, bool secure);
// epsilon at delta of counts[c] releases of every channel. discrete (secure noise): each release
// is a discrete Gaussian, composed with its proven RDP bound (the PLD accountant then reports that
// bound, never the continuous Gaussian's curve).
double composed_epsilon(const std::vector<Channel>& channels,
                        const std::vector<std::int64_t>& counts, double delta,
                        const std::string& accountant, bool discrete);

// Releases per channel that one user took part in: levels tree nodes, one target per update.
std::vector<std::int64_t> releases_made(const std::vector<Channel>& channels, int levels,
                                        std::int64_t updates);

// What the guarantee record of a private run states beyond the channels.
struct RunFacts {
  double epsilon, delta;
  std::string accountant;
  NeighbouringRelation neighbouring;
  std::string noise_name;
  bool seeded_noise, secure_noise;
  bool fixed_start;  // the initial state is a point mass, so regret uses no user data
  // the summed sampler_tv of every noised vector (privacy/secure_release.hpp: the record's delta
  // grows by sampler_delta(epsilon, sampler_tv))
  double sampler_tv = 0;
};
// The guarantee record (summary.json "privacy"): formal only with secure, non-reproducible noise
// and a fixed initial state (otherwise the regret curve uses every user's initial state).
PrivacyReport privacy_report(const std::vector<Channel>& channels,
                             const std::vector<std::int64_t>& releases, const RunFacts& facts);

// The binary-tree mechanism (Chan et al. 2011, Dwork et al. 2010) for the Gram increments of H
// steps: leaf t holds the increments between two reads; completing it releases the node at level
// ctz(t) (the sum of its leaves, snapped when the source is secure, plus a symmetric Gaussian
// matrix: upper triangle i.i.d. N(0, sigma^2), mirrored); prefix(h) is the sum of the released
// nodes that make up the leaves so far (popcount(t) <= levels of them).
class GramTree {
 public:
  // sigma and grid: the Gram channel's (Channel::sigma, Channel::grid).
  GramTree(int H, int d, int levels, double sigma, double grid, privacy::NoiseSource& noise);
  void add(int h, double w, const Eigen::VectorXd& f);  // w f f^T into the current leaf
  void complete_leaf();
  // A privacy audit around every node release (privacy/release_tap.hpp: channel 0, part h, round
  // the leaf count, sensitivity `sensitivity`); null: none.
  void set_tap(privacy::ReleaseTap* tap, double sensitivity) {
    tap_ = tap;
    tap_sensitivity_ = sensitivity;
  }
  const Eigen::MatrixXd& prefix(int h) const { return prefix_[h]; }
  std::int64_t leaves() const { return leaves_; }
  // Saves or loads the tree (run checkpoints): the leaf count, the current leaf, every exact and
  // released node and the prefix sums.
  void sync_state(StateIo& io);

 private:
  int H_, d_, levels_;
  double sigma_, grid_;
  privacy::NoiseSource& noise_;
  privacy::RepeatedGaussianRelease node_release_;  // at (sigma_, grid_)
  std::int64_t leaves_ = 0;
  std::vector<Eigen::MatrixXd> leaf_;                   // per h: the current leaf's sum
  std::vector<std::vector<Eigen::MatrixXd>> raw_;       // per h, level: the exact node sums
  std::vector<std::vector<Eigen::MatrixXd>> released_;  // per h, level: the released nodes
  std::vector<Eigen::MatrixXd> prefix_;
  std::vector<double> buf_;
  privacy::ReleaseTap* tap_ = nullptr;
  double tap_sensitivity_ = 0;
};

}  // namespace dprl::algos::lsvi
