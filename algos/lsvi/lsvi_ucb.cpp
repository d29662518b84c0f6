// LSVI-UCB family (algos/lsvi/lsvi_ucb.hpp). Implementation notes, the privacy construction and the
// choices the talk leaves open (all also in docs/paper002.md):
//
// Statistics. For every step h the learner keeps Lambda_h = lambda I + sum w phi phi^T (w = 1 for
// lsvi_ucb, 1 / sigma_bar^2 for lsvi_ucb_plus), its inverse by Sherman-Morrison, log det Lambda_h
// by the matrix determinant lemma, sum w phi r and the d x S matrix N_h = sum w phi e_{x'}^T of
// features by next state. Then sum w phi f(x') = N_h f for any value table f, which is the
// regression target of Algorithm 1 line 5 summed in another order (the state set is finite).
//
// lsvi_ucb_plus. The variance-weighted algorithm of Hu et al. 2022 as corrected in its arXiv
// version, which adopts the box of He et al. 2023 (LSVI-UCB++), the one we could verify:
//   optimistic / pessimistic / second-moment regressions on the weighted Gram matrix,
//   Q_h = min{r + w_hat^T phi + beta ||phi||, Q_h(previous), H},
//   Qc_h = max{r + w_chk^T phi - beta_bar ||phi||, Qc_h(previous), 0},
//   sigma^2 = [Vbar V](s, a) + E + D + H with [Vbar V] = [phi^T w_sq]_[0,H^2] - ([phi^T
//   w_hat]_[0,H])^2, E = min{beta_tilde ||phi||, H^2} + min{2 H beta_bar ||phi||, H^2}, D = min{c_v
//   4 d^3 H^2 (w_hat^T phi - w_chk^T phi + 2 beta_bar ||phi||), c_v d^3 H^3}, sigma_bar =
//   max{sigma, sqrt(H), c_v 2 d^3 H^2 ||phi||^(1/2)},   ||phi|| = ||phi||_{Lambda_h^-1}
// with the regression vectors of the last policy update (He et al. recompute them every episode;
// between updates ours use the data up to the last update) and c_v = variance_coeff (1 is the box).
// Rewards are regressed with the values (targets r + V, r + Vc), as in Algorithm 1 and the
// private setting where rewards are user data; He et al. assume them known (on the qiao_wang
// instance a known reward alone gives the optimal policy, which would make the comparison moot).
//
// Privacy (private: true; one user = one episode; joint DP by the billboard lemma): the channels,
// their sensitivities under `neighbouring`, the calibration and the tree mechanism are in
// algos/lsvi/lsvi_ucb_private.hpp. Releases:
// - Gram matrices by the binary-tree mechanism over the leaves at which Lambda_h is read
//   (episodes for none / adaptive batching, batches for static); the private Lambda~_h is lambda I
//   plus the released nodes of prefix t (popcount(t) <= L = floor(log2 R) + 1 of them) plus the
//   shift Upsilon = s_G sqrt(L) (4 sqrt(d) + 2 ln(2 H R / p)) I, which bounds the noise's spectral
//   norm with probability 1 - p (Shariff and Sheffet 2018; union over H R reads). If a shifted
//   matrix is still not positive definite the shift is doubled until it is (pd_repairs).
// - Target vectors fresh at every update: u_h = sum phi (r + V_{h+1}) for lsvi_ucb; for plus the
//   three weighted targets sum w phi (r + V), sum w phi (r + Vc), sum w phi V^2. Every private
//   path clamps Q and Qc (hence V and Vc) to [0, cap], cap = H or the remaining steps, which the
//   sensitivities assume.
// The accountant composes the releases actually made at the end. The switch test of adaptive
// batching reads the private Lambda~_h only, so switching is post-processing.
#include "algos/lsvi/lsvi_ucb.hpp"

#include <fmt/format.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "algos/core/private_noise.hpp"
#include "algos/core/tabular_policy.hpp"
#include "algos/lsvi/lsvi_ucb_private.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "engine/state_io.hpp"
#include "privacy/accountant.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/gaussian_mechanism.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/release_tap.hpp"
#include "privacy/secure_release.hpp"

namespace dprl::algos {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace {

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }

std::vector<double> row_major(const MatrixXd& m) {
  std::vector<double> out(sz(m.size()));
  for (int i = 0; i < m.rows(); ++i)
    for (int j = 0; j < m.cols(); ++j) out[sz(i) * m.cols() + j] = m(i, j);
  return out;
}

// The LSVI-UCB+ weight 1 / sigma_bar^2 of a transition with features f and reward r (the box of
// He et al. 2023; lsvi_ucb.cpp's opening comment), from the last update's regression vectors.
double plus_weight(const LsviUcbParams& p, const VectorXd& f, const MatrixXd& Minv,
                   const VectorXd& w_hat, const VectorXd& w_chk, const VectorXd& w_sq, double r,
                   int H, int d) {
  const double Hd = H;
  const double nb = std::sqrt(std::max(0.0, f.dot(Minv * f)));
  const double lin_opt = f.dot(w_hat), lin_pes = f.dot(w_chk);
  const double second = std::clamp(f.dot(w_sq), 0.0, Hd * Hd);
  const double first = std::clamp(lin_opt - r, 0.0, Hd);  // E[V_{h+1}(s')]
  const double var = second - first * first;
  const double E =
      std::min(p.beta_tilde * nb, Hd * Hd) + std::min(2.0 * Hd * p.beta_bar * nb, Hd * Hd);
  const double d3 = p.variance_coeff * static_cast<double>(d) * d * d;
  const double D =
      std::min(d3 * 4.0 * Hd * Hd * (lin_opt - lin_pes + 2.0 * p.beta_bar * nb), d3 * Hd * Hd * Hd);
  const double sigma = std::sqrt(std::max(0.0, var + E + std::max(D, 0.0) + Hd));
  const double sigma_bar = std::max({sigma, std::sqrt(Hd), d3 * 2.0 * Hd * Hd * std::sqrt(nb)});
  return 1.0 / (sigma_bar * sigma_bar);
}

}  // namespace

struct LsviUcb::State {
  State(const LsviUcbParams& p, const envs::LinearMdpModel& m, double lambda);

  // Before each policy update for the next episode k: every episode (none), at batch starts
  // (static), or when some det Lambda_h grew by switch_ratio since the last update (adaptive).
  bool update_due(std::int64_t k, std::int64_t batch_len, std::int64_t max_updates,
                  std::int64_t updates) const;
  // Reads the private Gram matrices (lambda I + released tree prefix + shift) into priv_gram,
  // priv_logdet and, when asked, priv_inv (the adaptive test needs just the log det every episode).
  void read_private(bool with_inverse);
  // Recomputes the value functions and the greedy policy from the current (private) statistics;
  // target_noise receives the noise of the first target channel (private runs).
  void update_policy(std::vector<double>& target_noise);
  // Step h of an update: the regressions, Q_h and Qc_h (plus), and V_h, Vc_h and greedy at h.
  void regress(int h, const MatrixXd& Minv, double cap, std::vector<double>& target_noise);
  void regress_plus(int h, const MatrixXd& Minv, double cap, std::vector<double>& target_noise);
  void greedy_values(int h);
  // Noise of channel c (its sigma, on its grid when secure) into x at step h, through the audit's
  // tap when there is one (round: the update being made).
  void release(std::size_t c, int h, std::span<double> x) {
    if (!tap) return channels[c].release(x, *noise);
    const privacy::ReleaseTap::Release r{static_cast<int>(c), h, round, channels[c].sigma,
                                         channels[c].sens};
    privacy::add_gaussian_release(x, tap->before(r, x), channels[c].grid, *noise);
    tap->after(r, x);
  }
  // One transition (features phi[sa], reward r, next state xn) with weight w into the exact
  // statistics and the private tree's current leaf.
  void add(int h, int sa, double r, int xn, double w);
  // Saves or loads everything above that changes during a run (checkpoints).
  void sync(StateIo& io);

  const LsviUcbParams& p;
  const bool plus, priv;
  const int S = 0, A = 0, H = 0, d = 0;
  const double lambda;
  RowMatrix phi;                   // (S * A) x d
  std::vector<MatrixXd> gram;      // exact Lambda_h (lambda I included)
  std::vector<MatrixXd> gram_inv;  // exact inverse (Sherman-Morrison)
  std::vector<double> logdet;      // exact log det
  std::vector<VectorXd> rsum;      // sum w phi r
  std::vector<MatrixXd> next;      // d x S
  // privacy: the channels (noise scales), the noise, the positive-definite shift of the private
  // Gram matrices and how often it had to be doubled
  std::vector<lsvi::Channel> channels;
  std::unique_ptr<privacy::NoiseSource> noise;
  double shift = 0;
  std::int64_t pd_repairs = 0;
  // private Gram matrices: the released tree prefix plus lambda I and the shift
  std::unique_ptr<lsvi::GramTree> tree;
  privacy::ReleaseTap* tap = nullptr;  // an audit around every release (null: none)
  std::int64_t round = 0;              // the update being made, for the tap
  std::vector<MatrixXd> priv_gram;       // the private matrix last read
  std::vector<MatrixXd> priv_inv;        // its inverse
  std::vector<double> priv_logdet;       // its log det
  std::vector<double> logdet_at_update;  // log det (exact or private) at the last update
  // the last update's regression vectors, tables and greedy policy [h * S + s]
  std::vector<VectorXd> w_hat, w_chk, w_sq;
  std::vector<double> q, qc;  // H * S * A optimistic / pessimistic (plus); q also for lsvi_ucb
  std::vector<double> v, vc;  // (H + 1) * S
  std::vector<std::int32_t> greedy;
  // scratch
  VectorXd target, bonus2, qlin, f, mf;
};

LsviUcb::State::State(const LsviUcbParams& p, const envs::LinearMdpModel& m, double lambda)
    : p(p),
      plus(p.variant == "lsvi_ucb_plus"),
      priv(p.private_),
      S(m.num_states),
      A(m.num_actions),
      H(m.horizon),
      d(m.dim),
      lambda(lambda) {
  const double Hd = H;
  phi.resize(S * A, d);
  for (int sa = 0; sa < S * A; ++sa)
    for (int i = 0; i < d; ++i) phi(sa, i) = m.features[sz(sa) * d + i];
  gram.assign(H, MatrixXd::Identity(d, d) * lambda);
  gram_inv.assign(H, MatrixXd::Identity(d, d) / lambda);
  logdet.assign(H, d * std::log(lambda));
  rsum.assign(H, VectorXd::Zero(d));
  next.assign(H, MatrixXd::Zero(d, S));
  w_hat.assign(H, VectorXd::Zero(d));
  w_chk.assign(H, VectorXd::Zero(d));
  w_sq.assign(H, VectorXd::Zero(d));
  q.assign(sz(H) * S * A, Hd);
  qc.assign(sz(H) * S * A, 0.0);
  v.assign(sz(H + 1) * S, 0.0);
  vc.assign(sz(H + 1) * S, 0.0);
  for (int h = 0; h < H; ++h)
    for (int x = 0; x < S; ++x) v[sz(h) * S + x] = Hd;
  logdet_at_update.assign(H, 0.0);
  priv_inv = gram_inv;
  priv_gram = gram;
  priv_logdet = logdet;
  greedy.assign(sz(H) * S, 0);
  target.resize(d);
  bonus2.resize(S * A);
  qlin.resize(S * A);
  f.resize(d);
  mf.resize(d);
}

bool LsviUcb::State::update_due(std::int64_t k, std::int64_t batch_len, std::int64_t max_updates,
                                std::int64_t updates) const {
  if (p.batching == "none") return true;
  if (p.batching == "static") return k % batch_len == 0;
  if (updates == 0) return true;
  bool update = false;
  const double log_ratio = std::log(p.switch_ratio);
  if (updates < max_updates)
    for (int h = 0; h < H && !update; ++h)
      update = (priv ? priv_logdet[h] : logdet[h]) - logdet_at_update[h] >= log_ratio;
  return update;
}

void LsviUcb::State::read_private(bool with_inverse) {
  for (int h = 0; h < H; ++h) {
    double extra = shift;
    for (int attempt = 0;; ++attempt) {
      MatrixXd g = tree->prefix(h);
      g.diagonal().array() += lambda + extra;
      Eigen::LLT<MatrixXd> llt(g);
      if (llt.info() == Eigen::Success) {
        priv_gram[h] = g;
        if (with_inverse) priv_inv[h] = llt.solve(MatrixXd::Identity(d, d));
        const auto& L = llt.matrixL();
        double ld = 0;
        for (int i = 0; i < d; ++i) ld += 2.0 * std::log(L(i, i));
        priv_logdet[h] = ld;
        break;
      }
      ++pd_repairs;
      extra = std::max(2.0 * extra, 1e-12 + lambda);
      if (attempt > 200)
        throw DataError("lsvi_ucb: private Gram matrix is not finite (statistics overflowed)");
    }
  }
}

void LsviUcb::State::update_policy(std::vector<double>& target_noise) {
  if (priv) read_private(true);
  for (int h = H - 1; h >= 0; --h) {
    const MatrixXd& Minv = priv ? priv_inv[h] : gram_inv[h];
    const double cap = p.clip == "remaining" ? static_cast<double>(H - h) : static_cast<double>(H);
    bonus2 = (phi * Minv).cwiseProduct(phi).rowwise().sum();
    if (plus)
      regress_plus(h, Minv, cap, target_noise);
    else
      regress(h, Minv, cap, target_noise);
    greedy_values(h);
  }
  for (int h = 0; h < H; ++h) logdet_at_update[h] = priv ? priv_logdet[h] : logdet[h];
}

void LsviUcb::State::regress(int h, const MatrixXd& Minv, double cap,
                             std::vector<double>& target_noise) {
  const Eigen::Map<const VectorXd> vn(v.data() + sz(h + 1) * S, S);
  target = rsum[h] + next[h] * vn;
  if (priv) {
    const VectorXd before = target;
    release(1, h, {target.data(), sz(d)});
    for (int i = 0; i < d; ++i) target_noise[sz(h) * d + i] = target[i] - before[i];
  }
  w_hat[h] = Minv * target;
  qlin = phi * w_hat[h];
  for (int sa = 0; sa < S * A; ++sa) {
    double qv = std::min(qlin[sa] + p.beta * std::sqrt(std::max(0.0, bonus2[sa])), cap);
    if (priv) qv = std::max(qv, 0.0);
    q[sz(h) * S * A + sa] = qv;
  }
}

void LsviUcb::State::regress_plus(int h, const MatrixXd& Minv, double cap,
                                  std::vector<double>& target_noise) {
  const Eigen::Map<const VectorXd> vn(v.data() + sz(h + 1) * S, S);
  const Eigen::Map<const VectorXd> vcn(vc.data() + sz(h + 1) * S, S);
  VectorXd t_opt = rsum[h] + next[h] * vn, t_pes = rsum[h] + next[h] * vcn,
           t_sq = next[h] * vn.cwiseProduct(vn);
  if (priv) {
    const VectorXd before = t_opt;
    release(1, h, {t_opt.data(), sz(d)});
    for (int i = 0; i < d; ++i) target_noise[sz(h) * d + i] = t_opt[i] - before[i];
    release(2, h, {t_pes.data(), sz(d)});
    release(3, h, {t_sq.data(), sz(d)});
  }
  w_hat[h] = Minv * t_opt;
  w_chk[h] = Minv * t_pes;
  w_sq[h] = Minv * t_sq;
  const VectorXd lin_opt = phi * w_hat[h], lin_pes = phi * w_chk[h];
  for (int x = 0; x < S; ++x)
    for (int a = 0; a < A; ++a) {
      const int sa = x * A + a;
      const std::size_t i = (sz(h) * S + x) * A + a;
      const double nb = std::sqrt(std::max(0.0, bonus2[sa]));
      q[i] = std::min({lin_opt[sa] + p.beta * nb, q[i], cap});
      qc[i] = std::max({lin_pes[sa] - p.beta_bar * nb, qc[i], 0.0});
      // the target sensitivities assume V, Vc in [0, H]: clamp in every private path
      if (priv) {
        q[i] = std::clamp(q[i], 0.0, cap);
        qc[i] = std::clamp(qc[i], 0.0, cap);
      }
    }
}

void LsviUcb::State::greedy_values(int h) {
  for (int x = 0; x < S; ++x) {
    const double* row = q.data() + (sz(h) * S + x) * A;
    const int a = greedy_action(row, A, {});
    greedy[sz(h) * S + x] = a;
    v[sz(h) * S + x] = row[a];
    if (plus) {
      const double* rc = qc.data() + (sz(h) * S + x) * A;
      vc[sz(h) * S + x] = *std::max_element(rc, rc + A);
    }
  }
}

void LsviUcb::State::sync(StateIo& io) {
  io.section(priv ? "lsvi_ucb_private" : "lsvi_ucb");
  const auto mat = [&](MatrixXd& m) { io(std::span<double>(m.data(), m.size())); };
  const auto vec = [&](VectorXd& v) { io(std::span<double>(v.data(), v.size())); };
  for (auto& m : gram) mat(m);
  for (auto& m : gram_inv) mat(m);
  io(logdet, true);
  for (auto& v : rsum) vec(v);
  for (auto& m : next) mat(m);
  io(shift);
  constexpr std::int64_t kMax = std::int64_t{1} << 62;
  io.bounded(pd_repairs, std::int64_t{0}, kMax, "positive-definite repairs");
  io.bounded(round, std::int64_t{0}, kMax, "update round");
  for (auto& m : priv_gram) mat(m);
  for (auto& m : priv_inv) mat(m);
  io(priv_logdet, true);
  io(logdet_at_update, true);
  for (auto* ws : {&w_hat, &w_chk, &w_sq})
    for (auto& v : *ws) vec(v);
  io(q, true);
  io(qc, true);
  io(v, true);
  io(vc, true);
  io(greedy, true);
  if (io.loading() && !std::all_of(greedy.begin(), greedy.end(),
                                   [&](std::int32_t a) { return a >= 0 && a < A; }))
    throw DataError("checkpoint: section 'lsvi_ucb' holds a greedy action outside the actions");
  if (tree) tree->sync_state(io);
  if (noise) noise->sync_state(io);
}

void LsviUcb::State::add(int h, int sa, double r, int xn, double w) {
  f = phi.row(sa).transpose();
  gram[h].noalias() += w * f * f.transpose();
  if (priv) tree->add(h, w, f);
  mf.noalias() = gram_inv[h] * f;
  const double quad = f.dot(mf);
  gram_inv[h].noalias() -= (w / (1.0 + w * quad)) * mf * mf.transpose();
  logdet[h] += std::log1p(w * quad);
  rsum[h] += w * r * f;
  next[h].col(xn) += w * f;
}

namespace {

// the metrics row of episode e (1-based) on a log-spaced grid, and the progress line
void log_episode(TrainContext& ctx, std::int64_t e, std::int64_t K, int H, double regret,
                 double regret_k, std::int64_t updates) {
  const auto decade = static_cast<std::int64_t>(std::pow(10.0, std::floor(std::log10(e))));
  if (e <= 10 || e % std::max<std::int64_t>(1, decade / 10) == 0 || e == K)
    ctx.append_metrics({{"episode", static_cast<double>(e)},
                        {"regret", regret},
                        {"regret_k", regret_k},
                        {"updates", static_cast<double>(updates)}});
  if ((e & 255) == 0 || e == K)
    ctx.progress().update(e * H, K * H, e, regret / static_cast<double>(e));
}

}  // namespace

LsviUcb::LsviUcb(const Params& p) : p_(p) {}
LsviUcb::~LsviUcb() = default;

void LsviUcb::calibrate_privacy(const envs::LinearMdpModel& m, int levels, std::int64_t max_updates,
                                double shift_per_sigma, std::uint64_t seed) {
  State& s = *st_;
  int support = 0;  // most non-zero features of one (s, a)
  for (int sa = 0; sa < s.S * s.A; ++sa) {
    int nz = 0;
    for (int i = 0; i < s.d; ++i) nz += m.features[sz(sa) * s.d + i] != 0.0;
    support = std::max(support, nz);
  }
  const bool replace = p_.neighbouring == "replace";
  s.channels =
      lsvi::make_channels({s.plus, replace, s.H, s.d, std::max(support, 1), levels, max_updates});
  lsvi::calibrate(s.channels, p_.epsilon, p_.delta, p_.accountant, p_.noise == "os-entropy");
  sigma_gram_ = s.channels[0].sigma;
  sigma_target_ = s.channels[1].sigma;
  s.noise = make_private_noise(p_.noise, seed, 2002,
                               {p_.epsilon, p_.delta, sigma_gram_, sigma_target_}, "lsvi_ucb");
  s.shift = shift_per_sigma * sigma_gram_;
  s.tree =
      std::make_unique<lsvi::GramTree>(s.H, s.d, levels, sigma_gram_, s.channels[0].grid, *s.noise);
  s.tap = tap_;
  if (tap_) s.tree->set_tap(tap_, s.channels[0].sens);
}

double LsviUcb::run_episode(const envs::LinearMdpModel& m, Rng& rng,
                            const std::vector<double>& v_opt, const std::vector<double>& v_pi) {
  State& s = *st_;
  int x = static_cast<int>(rng.categorical(m.initial));
  const double regret_k = v_opt[x] - v_pi[x];
  for (int h = 0; h < s.H; ++h) {
    const int a = s.greedy[sz(h) * s.S + x];
    const int sa = x * s.A + a;
    const double r = m.reward(h, x, a);
    const int xn = static_cast<int>(rng.categorical(m.next(h, x, a)));
    double w = 1.0;
    if (s.plus) {
      const MatrixXd& Minv = s.priv ? s.priv_inv[h] : s.gram_inv[h];
      w = plus_weight(p_, s.phi.row(sa).transpose(), Minv, s.w_hat[h], s.w_chk[h], s.w_sq[h], r,
                      s.H, s.d);
    }
    s.add(h, sa, r, xn, w);
    if (record_) transitions_.push_back({h, x, a, xn, w});
    x = xn;
  }
  return regret_k;
}

std::vector<double> LsviUcb::run(const envs::LinearMdpModel& m, std::int64_t K, std::uint64_t seed,
                                 TrainContext* ctx) {
  if (K < 1) throw ParamError(fmt::format("lsvi_ucb: episodes = {} must be >= 1", K));
  m.validate();
  const bool plus = p_.variant == "lsvi_ucb_plus";
  const int H = m.horizon, d = m.dim;
  const double Hd = H;
  const double lambda = p_.lambda > 0 ? p_.lambda : (plus ? 1.0 / (Hd * Hd * std::sqrt(d)) : 1.0);
  if (p_.batching == "static" && p_.batches > K)
    throw ParamError(fmt::format("lsvi_ucb: batches = {} exceeds episodes = {}", p_.batches, K));
  horizon_ = H;
  num_states_ = m.num_states;
  num_actions_ = m.num_actions;
  const lsvi::Schedule plan = lsvi::plan_schedule(p_, K, d, H, lambda);

  st_ = std::make_unique<State>(p_, m, lambda);
  State& s = *st_;
  if (s.priv) calibrate_privacy(m, plan.levels, plan.max_updates, plan.shift_per_sigma, seed);
  shift_ = s.shift;
  noise_multipliers_.clear();
  for (const auto& c : s.channels) noise_multipliers_.push_back(c.z);
  last_target_noise_.assign(s.priv ? sz(H) * d : 0, 0.0);

  // exact regret
  const envs::MdpValues opt = envs::optimal_values(m);
  std::vector<double> v_pi;
  Rng rng(derive_seed(seed, Domain::kAlgo, 2002));
  std::vector<double> cumulative(sz(K));
  updates_ = 0;
  regret_ = 0;
  episodes_done_ = 0;
  transitions_.clear();
  std::int64_t next = 0;  // the episode a resumed run starts with
  // what carries from one episode to the next, for checkpoints (transitions_ are for audits,
  // which write none)
  const TrainContext::SyncFn sync = [&](StateIo& io) {
    s.sync(io);
    io.bounded(next, std::int64_t{0}, K, "episode");
    io(rng);
    io(v_pi);
    if (io.loading() && v_pi.size() != opt.v.size())
      throw DataError("checkpoint: section 'lsvi_ucb' holds policy values of another size");
    io(cumulative, true);
    io(last_target_noise_, true);
    io.bounded(updates_, std::int64_t{0}, std::max<std::int64_t>(K, plan.max_updates), "updates");
    io(regret_);
    io.bounded(episodes_done_, std::int64_t{0}, K, "episodes done");
  };
  // regret rows (and the progress line's regret) come from releases
  if (ctx && s.priv) ctx->hold_metrics_until_checkpoints();
  // After a fall-back to checkpoint.prev.bin with fresh noise the tree nodes completed after it
  // would be drawn again with other noise, while rows made from the first draws were flushed with
  // the lost newest checkpoint; the epsilon counts one draw per node. Refused, as selective
  // DP-SGD does.
  if (ctx && ctx->resume(sync) && s.priv && p_.noise != "seeded" && ctx->resumed_from_previous())
    throw DataError(
        "lsvi_ucb: the newest checkpoint is missing or damaged and the noise is not seeded, so the "
        "run cannot continue from checkpoint.prev.bin without losing count of its releases");
  for (std::int64_t k = next; k < K; ++k) {
    if (s.update_due(k, plan.batch_len, plan.max_updates, updates_)) {
      s.round = updates_ + 1;
      s.update_policy(last_target_noise_);
      ++updates_;
      v_pi = envs::policy_values(m, s.greedy);
    }
    const double regret_k = run_episode(m, rng, opt.v, v_pi);
    regret_ += regret_k;
    cumulative[sz(k)] = regret_;
    ++episodes_done_;
    // the tree leaf ends with the episode (none / adaptive) or with the batch (static)
    if (s.priv) {
      const bool leaf_end = p_.batching != "static" || (k + 1) % plan.batch_len == 0 || k + 1 == K;
      if (leaf_end) {
        s.tree->complete_leaf();
        if (p_.batching == "adaptive") s.read_private(plus);  // plus weights use the inverse
      }
    }
    if (ctx) {
      log_episode(*ctx, k + 1, K, H, regret_, regret_k, updates_);
      next = k + 1;
      if (ctx->checkpoint_due(next * H) && next < K) ctx->save_checkpoint(next * H, sync);
    }
  }
  summarise(m, envs::initial_value(m, opt.v), envs::initial_value(m, v_pi), lambda,
            plan.max_updates, plan.levels);
  return cumulative;
}

void LsviUcb::summarise(const envs::LinearMdpModel& m, double v_star, double v_final, double lambda,
                        std::int64_t max_updates, int levels) {
  const State& s = *st_;
  greedy_ = s.greedy;
  q_ = s.q;
  extra_ = {{"regret", regret_},
            {"updates", static_cast<double>(updates_)},
            {"planned_updates", static_cast<double>(max_updates)},
            {"v_star", v_star},
            {"v_final_policy", v_final},
            {"lambda", lambda}};
  if (p_.batching == "static") extra_.push_back({"batches", static_cast<double>(max_updates)});
  report_.reset();
  if (!s.priv) return;
  const std::vector<std::int64_t> releases = lsvi::releases_made(s.channels, levels, updates_);
  epsilon_spent_ = lsvi::composed_epsilon(s.channels, releases, p_.delta, p_.accountant,
                                           p_.noise == "os-entropy");
  extra_.push_back({"sigma_gram", sigma_gram_});
  extra_.push_back({"sigma_target", sigma_target_});
  extra_.push_back({"gram_shift", s.shift});
  extra_.push_back({"tree_levels", static_cast<double>(levels)});
  extra_.push_back({"pd_repairs", static_cast<double>(s.pd_repairs)});
  extra_.push_back({"epsilon_spent", epsilon_spent_});
  bool fixed_start = false;  // a point-mass initial state: the regret uses no user data
  for (double x : m.initial) fixed_start = fixed_start || x == 1.0;
  // every noised vector's sampler distance (each on the table sampler of its channel's width when
  // secure; an audit's tap, which may change the width, sends its releases to the exact sampler,
  // and this bound still counts them): H Gram nodes of d(d + 1)/2 values per leaf, H targets of d
  // values per channel and update
  const bool secure = s.noise->secure();
  double tv = static_cast<double>(s.tree->leaves()) * s.H *
              privacy::repeated_release_tv(sz(s.d) * (sz(s.d) + 1) / 2, secure);
  for (std::size_t c = 1; c < s.channels.size(); ++c)
    tv += static_cast<double>(updates_) * s.H * privacy::repeated_release_tv(sz(s.d), secure);
  report_ = lsvi::privacy_report(
      s.channels, releases,
      {epsilon_spent_, p_.delta, p_.accountant, parse_neighbouring(p_.neighbouring).value(),
       s.noise->name(), p_.noise == "seeded", s.noise->secure(), fixed_start, tv});
}

std::vector<double> LsviUcb::gram_inverse(int h) const {
  DPRL_CHECK(st_ && h >= 0 && h < st_->H);
  return row_major(st_->gram_inv[h]);
}

std::vector<double> LsviUcb::private_gram(int h) const {
  DPRL_CHECK(st_ && h >= 0 && h < st_->H && !st_->priv_gram.empty());
  return row_major(st_->priv_gram[h]);
}

std::int64_t LsviUcb::tree_leaves() const { return st_ && st_->tree ? st_->tree->leaves() : 0; }

const std::vector<double>& LsviUcb::values() const {
  DPRL_CHECK(st_);
  return st_->v;
}

const std::vector<double>& LsviUcb::pessimistic_values() const {
  DPRL_CHECK(st_);
  return st_->vc;
}

std::vector<double> LsviUcb::gram(int h) const {
  DPRL_CHECK(st_ && h >= 0 && h < st_->H);
  return row_major(st_->gram[h]);
}

namespace {

// the linear MDP behind an env and the number of episodes K, or ParamError naming the learner
std::pair<const envs::LinearMdpModel*, std::int64_t> plan_run(const LsviUcbParams& p,
                                                              const Env& env,
                                                              const TrainParams& train) {
  const auto* lin = dynamic_cast<const envs::LinearMdp*>(&env);
  if (!lin)
    throw ParamError(fmt::format("{}: needs the linear_mdp env (known features), got '{}'",
                                 p.variant, env.spec().id));
  const auto& m = lin->model();
  const std::int64_t K = p.episodes > 0 ? p.episodes : train.steps / m.horizon;
  if (K < 1)
    throw ParamError(fmt::format("{}: train.steps = {} is less than one episode of H = {} steps",
                                 p.variant, train.steps, m.horizon));
  if (p.batching == "static" && p.batches > K)
    throw ParamError(fmt::format("lsvi_ucb: batches = {} exceeds episodes = {}", p.batches, K));
  return {&m, K};
}

}  // namespace

void LsviUcb::check(const RunPlan& plan) { plan_run(p_, plan.env, plan.train); }

TrainSteps LsviUcb::train(TrainContext& ctx) {
  auto env = ctx.make_env();
  const auto [mp, K] = plan_run(p_, *env, ctx.train());
  const auto& m = *mp;
  env_id_ = env->spec().id;
  run(m, K, ctx.seed(), &ctx);
  if (p_.private_) ctx.set_epsilon(epsilon_spent_);
  auto pol = policy();
  ctx.evaluate(*pol, K * m.horizon, K);
  return {K * m.horizon, 0};  // least squares, no gradient steps
}

std::unique_ptr<Policy> LsviUcb::policy() const {
  if (q_.empty()) throw ParamError("lsvi_ucb: no policy before training");
  return std::make_unique<TabularGreedyPolicy>(env_id_, num_states_, num_actions_, q_, false, 0.0,
                                               horizon_);
}

void LsviUcb::save_policy(const std::filesystem::path& file) const {
  TabularGreedyPolicy(env_id_, num_states_, num_actions_, q_, false, 0.0, horizon_).save(file);
}

}  // namespace dprl::algos
