#include "algos/lsvi/lsvi_ucb_private.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "algos/lsvi/lsvi_ucb.hpp"
#include "engine/error.hpp"
#include "engine/state_io.hpp"
#include "privacy/accountant.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/gaussian_mechanism.hpp"
#include "privacy/root_finding.hpp"
#include "privacy/secure_release.hpp"

namespace dprl::algos::lsvi {

using Eigen::MatrixXd;
using Eigen::VectorXd;

double gram_sensitivity(bool plus, int H, bool replace) {
  const double Hd = H;
  return std::sqrt(Hd) * (replace ? std::sqrt(2.0) : 1.0) / (plus ? Hd : 1.0);
}

Schedule plan_schedule(const LsviUcbParams& p, std::int64_t K, int d, int H, double lambda) {
  const bool plus = p.variant == "lsvi_ucb_plus", priv = p.private_;
  const double Kd = static_cast<double>(K), Hd = H;
  Schedule sc;
  std::int64_t batches = 0;
  if (p.batching == "static")
    batches = p.batches > 0 ? p.batches
                            : std::clamp<std::int64_t>(
                                  static_cast<std::int64_t>(std::ceil(
                                      std::pow(Kd * (priv ? p.epsilon : 1.0), 0.4) *
                                      std::pow(static_cast<double>(d), 0.6) * std::pow(Hd, 0.2))),
                                  1, K);
  sc.batch_len = batches > 0 ? (K + batches - 1) / batches : 1;
  // batch starts for static, every episode otherwise
  sc.reads = p.batching == "static" ? (K + sc.batch_len - 1) / sc.batch_len : K;
  sc.levels = std::bit_width(static_cast<std::uint64_t>(sc.reads));
  sc.shift_per_sigma = std::sqrt(static_cast<double>(sc.levels)) *
                       (4.0 * std::sqrt(d) +
                        2.0 * std::log(2.0 * Hd * static_cast<double>(sc.reads) / p.failure_prob));
  sc.max_updates = K;
  if (p.batching == "static") sc.max_updates = sc.reads;
  if (p.batching == "adaptive") {
    if (p.max_updates > 0) {
      sc.max_updates = p.max_updates;
    } else {
      double lambda_eff = lambda;
      if (priv) {  // the Gaussian-composition (GDP) share of the Gram channel
        const double mu = 1.0 / privacy::analytic_gaussian_sigma(p.epsilon, p.delta, 1.0);
        const double channels = plus ? 4 : 2;
        lambda_eff += sc.shift_per_sigma * std::sqrt(channels * sc.levels) / mu *
                      gram_sensitivity(plus, H, p.neighbouring == "replace");
      }
      const double n_max = plus ? Kd / Hd : Kd;
      sc.max_updates =
          static_cast<std::int64_t>(
              d * Hd * std::log2(1.0 + n_max / (static_cast<double>(d) * lambda_eff))) +
          1;
    }
  }
  sc.max_updates = std::clamp<std::int64_t>(sc.max_updates, 1, K);
  return sc;
}

std::vector<Channel> make_channels(const ChannelPlan& p) {
  const double Hd = p.H, r = p.replace ? 2.0 : 1.0;
  const double k = std::min(p.support, p.d), d = p.d;
  const double gram_coords = p.H * std::min(d * (d + 1) / 2, r * k * (k + 1) / 2);
  const double target_coords = p.H * std::min(d, r * k);
  std::vector<Channel> ch;
  ch.push_back({"gram", p.levels, gram_sensitivity(p.plus, p.H, p.replace), gram_coords});
  if (p.plus) {
    ch.push_back({"target_opt", p.updates, r * std::sqrt(Hd) * (Hd + 1.0) / Hd, target_coords});
    ch.push_back({"target_pes", p.updates, r * std::sqrt(Hd) * (Hd + 1.0) / Hd, target_coords});
    ch.push_back({"target_sq", p.updates, r * std::sqrt(Hd) * Hd, target_coords});
  } else {
    ch.push_back({"target", p.updates, r * std::sqrt(Hd) * (Hd + 1.0), target_coords});
  }
  return ch;
}

double composed_epsilon(const std::vector<Channel>& ch, const std::vector<std::int64_t>& counts,
                        double delta, const std::string& accountant, bool discrete) {
  auto a = privacy::make_accountant(accountant);
  for (std::size_t c = 0; c < ch.size(); ++c) {
    if (counts[c] == 0) continue;
    a->compose(discrete ? privacy::DpEvent::discrete_gaussian(ch[c].z)
                        : privacy::DpEvent::gaussian(ch[c].z),
               counts[c]);
  }
  return a->epsilon(delta);
}

void calibrate(std::vector<Channel>& channels, double epsilon, double delta,
               const std::string& accountant, bool secure) {
  const double n = static_cast<double>(channels.size());
  std::vector<std::int64_t> counts;
  for (const auto& ch : channels) counts.push_back(ch.count);
  auto set_scale = [&](double c) {
    for (auto& ch : channels) ch.z = c * std::sqrt(n * static_cast<double>(ch.count));
  };
  auto ok = [&](double c) {
    set_scale(c);
    return composed_epsilon(channels, counts, delta, accountant, secure) <= epsilon;
  };
  // the Gaussian-composition answer c = 1 / mu is exact, so no valid accountant certifies less
  // noise: it is the lower end of the bracket
  const double mu = 1.0 / privacy::analytic_gaussian_sigma(epsilon, delta, 1.0);
  double lo = 1.0 / mu, hi = lo;
  while (!ok(hi)) {
    lo = hi;
    hi *= 1.02;
    if (hi > 1e12) throw ParamError("lsvi_ucb: cannot calibrate the noise for this budget");
  }
  // !ok(lo), ok(hi) (or lo = hi: the lower end certifies): bisect to 1e-5 relative, keep the end
  // that certifies
  if (lo < hi) {
    privacy::RootOptions opt;
    opt.rel_tol = 1e-5;
    opt.max_steps = 40;
    hi = privacy::find_boundary([&](double c) { return ok(c) ? -1.0 : 1.0; }, lo, hi, opt).hi;
  }
  set_scale(hi);
  for (auto& ch : channels) {
    const privacy::SecurePlan plan = privacy::gaussian_release_plan(
        ch.z * ch.sens, ch.sens, static_cast<std::size_t>(ch.coords), secure);
    ch.sigma = plan.scale;
    ch.grid = plan.grid;
    ch.sens_eff = ch.sigma / ch.z;
    ch.release = privacy::RepeatedGaussianRelease(ch.sigma, ch.grid);
  }
}

std::vector<std::int64_t> releases_made(const std::vector<Channel>& channels, int levels,
                                        std::int64_t updates) {
  std::vector<std::int64_t> r(channels.size(), updates);
  r[0] = levels;
  return r;
}

PrivacyReport privacy_report(const std::vector<Channel>& channels,
                             const std::vector<std::int64_t>& releases, const RunFacts& f) {
  PrivacyReport r;
  r.epsilon = f.epsilon;
  r.sampler_delta = privacy::sampler_delta(f.epsilon, f.sampler_tv);
  r.delta = privacy::record_delta(f.delta, r.sampler_delta);
  r.accountant = f.accountant;
  r.neighbouring = f.neighbouring;
  r.unit = "episode (one user)";
  std::string sens = "L2 per release:";
  for (const auto& c : channels)
    sens += fmt::format(" {} {:.6g}{};", c.name, c.sens_eff,
                        c.sens_eff > c.sens ? fmt::format(" ({:.6g} + snapping)", c.sens) : "");
  sens.pop_back();
  r.sensitivity = sens;
  r.covers = {"the released Gram matrices and regression targets (not written)",
              "the actions recommended to every other user (joint DP, billboard lemma)",
              "policy.json"};
  if (f.fixed_start) {
    r.covers.push_back("metrics.csv (regret of the released policies on the public model)");
    r.covers.push_back("summary.json");
  }
  r.formal = f.secure_noise && !f.seeded_noise && f.fixed_start;
  r.noise_source = f.noise_name;
  r.reproducible_noise = f.seeded_noise;
  nlohmann::ordered_json j;
  j["guarantee"] =
      "joint DP by the billboard lemma: the releases are (epsilon, delta)-DP; every other user's "
      "actions are post-processing of the releases and their own data";
  if (f.secure_noise)
    j["accounting"] =
        "discrete Gaussian releases composed with their proven RDP a / (2 z^2) (Canonne, Kamath "
        "and Steinke 2020); a pld accountant reports this bound too, as it has no proven curve "
        "for the discrete Gaussian";
  std::string why;
  if (f.seeded_noise) why += "the seeded noise can be regenerated from the config; ";
  if (!f.secure_noise) why += "the noise is not from the secure sampler; ";
  if (!f.fixed_start)
    why += "the regret in metrics.csv and summary.json uses every user's initial state; ";
  if (!why.empty()) {
    why.resize(why.size() - 2);
    j["why_not_formal"] = why;
  }
  nlohmann::ordered_json cs = nlohmann::ordered_json::array();
  for (std::size_t c = 0; c < channels.size(); ++c) {
    nlohmann::ordered_json e;
    e["name"] = channels[c].name;
    e["l2_sensitivity"] = channels[c].sens;
    e["l2_sensitivity_snapped"] = channels[c].sens_eff;
    e["noise_multiplier"] = channels[c].z;
    e["sigma"] = channels[c].sigma;
    e["planned_releases"] = channels[c].count;
    e["releases"] = releases[c];
    cs.push_back(e);
  }
  j["channels"] = cs;
  r.details_json = j.dump();
  return r;
}

GramTree::GramTree(int H, int d, int levels, double sigma, double grid, privacy::NoiseSource& noise)
    : H_(H),
      d_(d),
      levels_(levels),
      sigma_(sigma),
      grid_(grid),
      noise_(noise),
      node_release_(sigma, grid) {
  leaf_.assign(H, MatrixXd::Zero(d, d));
  raw_.assign(H, std::vector<MatrixXd>(levels, MatrixXd::Zero(d, d)));
  released_ = raw_;
  prefix_.assign(H, MatrixXd::Zero(d, d));
}

void GramTree::add(int h, double w, const VectorXd& f) {
  leaf_[h].noalias() += w * f * f.transpose();
}

void GramTree::complete_leaf() {
  const std::int64_t t = ++leaves_;
  const int lvl = std::countr_zero(static_cast<std::uint64_t>(t));
  DPRL_CHECK(lvl < levels_);
  const std::size_t m = static_cast<std::size_t>(d_) * (d_ + 1) / 2;
  for (int h = 0; h < H_; ++h) {
    // the node at level lvl covers this leaf and the nodes below it, which it absorbs
    MatrixXd& node = raw_[h][lvl];
    node = leaf_[h];
    for (int j = 0; j < lvl; ++j) {
      node += raw_[h][j];
      raw_[h][j].setZero();
      released_[h][j].setZero();
    }
    leaf_[h].setZero();
    // release: upper triangle (diagonal included) snapped and noised, mirrored
    buf_.resize(m);
    std::size_t k = 0;
    for (int j = 0; j < d_; ++j)
      for (int i = 0; i <= j; ++i) buf_[k++] = node(i, j);
    if (tap_) {
      const privacy::ReleaseTap::Release r{0, h, t, sigma_, tap_sensitivity_};
      privacy::add_gaussian_release(buf_, tap_->before(r, buf_), grid_, noise_);
      tap_->after(r, buf_);
    } else {
      node_release_(buf_, noise_);
    }
    MatrixXd& out = released_[h][lvl];
    k = 0;
    for (int j = 0; j < d_; ++j)
      for (int i = 0; i <= j; ++i) {
        out(i, j) = buf_[k];
        out(j, i) = buf_[k];
        ++k;
      }
    prefix_[h].setZero();
    for (int j = 0; j < levels_; ++j)
      if ((t >> j) & 1) prefix_[h] += released_[h][j];
  }
}

void GramTree::sync_state(StateIo& io) {
  io.section("gram_tree");
  // complete_leaf() needs the level of leaves_ + 1 below levels_
  const std::int64_t max_leaves =
      levels_ >= 62 ? std::numeric_limits<std::int64_t>::max() - 1 : (std::int64_t{1} << levels_) - 2;
  io.bounded(leaves_, std::int64_t{0}, std::max<std::int64_t>(0, max_leaves), "tree leaves");
  const auto matrix = [&](MatrixXd& m) { io(std::span<double>(m.data(), m.size())); };
  for (int h = 0; h < H_; ++h) {
    matrix(leaf_[h]);
    for (auto& m : raw_[h]) matrix(m);
    for (auto& m : released_[h]) matrix(m);
    matrix(prefix_[h]);
  }
}

}  // namespace dprl::algos::lsvi
