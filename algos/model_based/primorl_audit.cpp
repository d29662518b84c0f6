#include "algos/model_based/primorl_audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "algos/audit/audit_report.hpp"
#include "algos/core/private_noise.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "engine/thread_pool.hpp"
#include "privacy/calibration.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/dp_fedavg.hpp"
#include "privacy/ledger.hpp"
#include "privacy/one_run_audit.hpp"
#include "privacy/release_tap.hpp"

namespace dprl::algos {

namespace mb = model_based;

namespace {

// Where the white-box canaries go in the release vector (every block of every member, in order):
// the start of every clip group with at least M coordinates, and the groups' threshold.
struct CanaryLayout {
  std::vector<std::size_t> starts;
  std::size_t groups = 0;  // G, all clip groups
  double threshold = 0;    // per group, for clip norm C
};

CanaryLayout canary_layout(const mb::ProbEnsemble& model, const std::string& clipping,
                           double clip_norm, std::int64_t M) {
  CanaryLayout c;
  std::size_t member = 0;
  for (const auto& b : model.blocks()) member += b.size;
  const bool flat = clipping == "flat";
  const auto L = model.blocks().size();
  c.groups = flat ? model.members() : model.members() * L;
  c.threshold = clip_norm / std::sqrt(static_cast<double>(c.groups));
  for (int i = 0; i < model.members(); ++i) {
    const std::size_t base = static_cast<std::size_t>(i) * member;
    if (flat) {
      if (member >= static_cast<std::size_t>(M)) c.starts.push_back(base);
      continue;
    }
    std::size_t off = 0;
    for (const auto& b : model.blocks()) {
      if (b.size >= static_cast<std::size_t>(M)) c.starts.push_back(base + off);
      off += b.size;
    }
  }
  return c;
}

// White-box Dirac canaries around each DP-FedAvg release.
class FedAvgCanaries final : public privacy::ReleaseTap {
 public:
  FedAvgCanaries(CanarySet& c, const CanaryLayout& layout, double magnitude, double q,
                 double denominator, double noise_factor, std::uint64_t seed)
      : c_(c),
        starts_(layout.starts),
        magnitude_(magnitude),
        norm_(magnitude * std::sqrt(static_cast<double>(layout.starts.size()))),
        q_(q),
        denominator_(denominator),
        noise_factor_(noise_factor),
        rng_(seed),
        sampled_(c.in.size(), 0),
        y_(c.in.size(), 0.0) {}

  double before(const Release& r, std::span<double> x) override {
    const auto add = magnitude_ / denominator_;
    for (std::size_t j = 0; j < sampled_.size(); ++j) {
      sampled_[j] = c_.in[j] && rng_.uniform() < q_;
      if (sampled_[j])
        for (const std::size_t s : starts_) x[s + j] += add;
    }
    return r.sd * noise_factor_;
  }

  void after(const Release& r, std::span<double> x) override {
    // projection on each canary's unit direction, in sum units
    const double scale = denominator_ * magnitude_ / norm_;
    for (std::size_t j = 0; j < y_.size(); ++j) {
      double s = 0;
      for (const std::size_t st : starts_) s += x[st + j];
      y_[j] = s * scale;
    }
    if (sd_ == 0) sd_ = robust_scale(y_, r.sd * denominator_);
    for (std::size_t j = 0; j < y_.size(); ++j)
      c_.score[j] += privacy::audit::poisson_llr(y_[j], norm_, sd_, q_);
  }

  double norm() const { return norm_; }
  double sd_seen() const { return sd_; }

 private:
  CanarySet& c_;
  std::vector<std::size_t> starts_;
  double magnitude_, norm_, q_, denominator_, noise_factor_;
  Rng rng_;
  std::vector<char> sampled_;
  std::vector<double> y_;
  double sd_ = 0;
};

// Only the noise of the release, scaled (black-box mis-specification).
struct NoiseOnlyTap final : privacy::ReleaseTap {
  double factor;
  explicit NoiseOnlyTap(double f) : factor(f) {}
  double before(const Release& r, std::span<double>) override { return r.sd * factor; }
  void after(const Release&, std::span<double>) override {}
};

// Per-row mean and standard deviation of a matrix's columns (a public table's).
void row_moments(const nn::Mat& m, std::vector<double>& mean, std::vector<double>& sd) {
  const auto rows = static_cast<std::size_t>(m.rows());
  const auto n = static_cast<double>(m.cols());
  mean.assign(rows, 0.0);
  sd.assign(rows, 0.0);
  for (Eigen::Index c = 0; c < m.cols(); ++c)
    for (std::size_t r = 0; r < rows; ++r) mean[r] += m(static_cast<Eigen::Index>(r), c);
  for (auto& v : mean) v /= n;
  for (Eigen::Index c = 0; c < m.cols(); ++c)
    for (std::size_t r = 0; r < rows; ++r) {
      const double d = m(static_cast<Eigen::Index>(r), c) - mean[r];
      sd[r] += d * d;
    }
  for (auto& v : sd) v = std::sqrt(v / n) + 1e-3;
}

// Black-box canary transitions (inputs x, targets y: one column per canary) and the public
// target mean.
struct CanaryData {
  nn::Mat x, y;
  std::vector<double> ybar;
  std::size_t length = 1;
};

CanaryData canary_data(const Primorl::ModelStage& st, const EnvSpec& spec, std::int64_t M,
                       std::uint64_t seed) {
  CanaryData c;
  std::vector<double> xm, xs, ys;
  row_moments(st.test.x, xm, xs);
  row_moments(st.test.y, c.ybar, ys);
  const std::size_t D = spec.observation.dim(), A = spec.action.dim();
  const auto in = static_cast<Eigen::Index>(D + A), out = st.test.y.rows();
  c.x.resize(in, M);
  c.y.resize(out, M);
  Rng r(audit_stream(seed, 1));
  for (Eigen::Index j = 0; j < M; ++j) {
    for (std::size_t i = 0; i < D; ++i) {
      double v = xm[i] + 4.0 * xs[i] * (2.0 * r.uniform() - 1.0);
      v = std::clamp(v, std::max(spec.observation.low[i], -3.0e38),
                     std::min(spec.observation.high[i], 3.0e38));
      c.x(static_cast<Eigen::Index>(i), j) = static_cast<float>(v);
    }
    for (std::size_t i = 0; i < A; ++i) {
      const double lo = spec.action.low[i], hi = spec.action.high[i];
      c.x(static_cast<Eigen::Index>(D + i), j) = static_cast<float>(lo + (hi - lo) * r.uniform());
    }
    for (Eigen::Index k = 0; k < out; ++k)
      c.y(k, j) = static_cast<float>(c.ybar[k] + 3.0 * ys[k] * ((r.next_u64() >> 63) ? 1 : -1));
  }
  std::vector<std::size_t> lengths;
  for (std::size_t u = 0; u < st.train.units(); ++u) lengths.push_back(st.train.unit_size(u));
  std::nth_element(lengths.begin(), lengths.begin() + lengths.size() / 2, lengths.end());
  c.length = std::max<std::size_t>(1, lengths[lengths.size() / 2]);
  return c;
}

// The training table with the included canaries appended as units of `length` copies each.
mb::TransitionTable with_canaries(const mb::TransitionTable& t, const CanaryData& c,
                                  const CanarySet& set) {
  mb::TransitionTable out;
  const auto n = t.x.cols();
  const auto add = static_cast<Eigen::Index>(set.included) * static_cast<Eigen::Index>(c.length);
  out.x.resize(t.x.rows(), n + add);
  out.y.resize(t.y.rows(), n + add);
  out.x.leftCols(n) = t.x;
  out.y.leftCols(n) = t.y;
  out.start = t.start;
  out.user = t.user;
  std::int64_t next = 0;
  for (const auto u : t.user) next = std::max(next, u + 1);
  Eigen::Index col = n;
  for (std::int64_t j = 0; j < set.size(); ++j) {
    if (!set.in[j]) continue;
    for (std::size_t k = 0; k < c.length; ++k, ++col) {
      out.x.col(col) = c.x.col(j);
      out.y.col(col) = c.y.col(j);
    }
    out.start.push_back(static_cast<std::size_t>(col));
    out.user.push_back(next + j);
  }
  return out;
}

void black_box_scores(const mb::ProbEnsemble& model, const CanaryData& c, CanarySet& set) {
  mb::EnsembleWork w;
  nn::Mat mean, lv;
  model.predict(c.x, mean, lv, w);
  const auto out = c.y.rows();
  for (Eigen::Index j = 0; j < c.x.cols(); ++j) {
    double s = 0;
    for (int i = 0; i < model.members(); ++i)
      for (Eigen::Index k = 0; k < out; ++k) {
        const Eigen::Index row = i * out + k;
        s += (c.y(k, j) - c.ybar[k]) * (mean(row, j) - c.ybar[k]) / std::exp(lv(row, j));
      }
    set.score[j] = s / model.members();
    if (!std::isfinite(set.score[j]))
      throw DataError("audit: the released model's prediction at a canary is not finite");
  }
}

}  // namespace

void check_primorl_audit(const Primorl& learner, const EnvSpec& spec, const AuditParams& a) {
  check_audit_params(a);
  const PrimorlParams& p = learner.primorl_params();
  if (p.variant != "tdp")
    throw ParamError(fmt::format(
        "audit: primorl variant '{}' has no finite epsilon (only tdp adds noise): nothing to "
        "audit",
        p.variant));
  if (a.white_box) {
    const mb::ProbEnsemble model(primorl_model_config(p, static_cast<int>(spec.observation.dim()),
                                                      static_cast<int>(spec.action.dim())));
    const CanaryLayout l = canary_layout(model, p.clipping, p.clip_norm, a.canaries);
    if (l.starts.empty())
      throw ParamError(fmt::format(
          "audit.canaries = {}: white-box canaries need a clip group of at least that many "
          "parameters (the largest has {})",
          a.canaries, [&] {
            std::size_t big = 0, member = 0;
            for (const auto& b : model.blocks()) {
              big = std::max(big, b.size);
              member += b.size;
            }
            return p.clipping == "flat" ? member : big;
          }()));
  }
}

AuditReport audit_primorl(Primorl& learner, const std::function<std::unique_ptr<Env>()>& make_env,
                          std::uint64_t seed, const AuditParams& a) {
  auto env = make_env();
  const EnvSpec& spec = env->spec();
  check_primorl_audit(learner, spec, a);
  const PrimorlParams& p = learner.primorl_params();
  Primorl::ModelStage st = learner.model_stage(make_env, *env, seed);
  const auto M = a.canaries;
  const auto aseed = static_cast<std::uint64_t>(a.seed);
  CanarySet set(M, aseed);
  const auto K = static_cast<std::int64_t>(st.train.units());

  // the run's TDP settings with the canaries in the population, then the mis-specification
  mb::TdpConfig cfg = st.tdp;
  cfg.units = K + M;
  if (a.steps > 0) cfg.rounds = a.steps;
  cfg.pld_block = cfg.rounds + 1;
  const double sens = mis_sensitivity_factor(a.mis_specify);
  cfg.clip_norm *= sens;
  cfg.z /= sens;
  const double denominator = cfg.q * static_cast<double>(K + M);

  CanaryData cd;
  mb::TransitionTable table;
  if (!a.white_box) {
    cd = canary_data(st, spec, M, aseed);
    table = with_canaries(st.train, cd, set);
  }
  const mb::TransitionTable& train = a.white_box ? st.train : table;
  std::unique_ptr<FedAvgCanaries> tap;
  NoiseOnlyTap noise_only(mis_noise_factor(a.mis_specify));
  if (a.white_box) {
    const CanaryLayout l = canary_layout(st.model, p.clipping, p.clip_norm, M);
    tap = std::make_unique<FedAvgCanaries>(set, l, l.threshold * sens, cfg.q, denominator,
                                           mis_noise_factor(a.mis_specify), audit_stream(aseed, 4));
  }
  privacy::ReleaseTap* tap_used = tap ? static_cast<privacy::ReleaseTap*>(tap.get())
                                      : static_cast<privacy::ReleaseTap*>(&noise_only);
  // the rounds the run trains: all of them, or those its budget affords
  const privacy::DpEvent event =
      privacy::DpEvent::poisson_sampled(p.q, privacy::DpEvent::gaussian(p.z));
  if (p.budget_epsilon > 0)
    cfg.rounds = std::min(cfg.rounds, privacy::steps_within_budget(event, p.budget_epsilon, p.delta,
                                                                   "rdp", cfg.rounds));
  // the run's source kind (os-entropy or seeded), on the audit's own stream
  auto source = make_private_noise(p.noise, audit_stream(aseed, 3), 0,
                                   {p.z, p.q, p.clip_norm, p.delta}, "primorl audit");
  ThreadPool pool(p.threads);
  const mb::TrainResult res = mb::train_ensemble_tdp(st.model, train, st.test, cfg, st.tdp_seed,
                                                     *source, nullptr, nullptr, pool, {}, tap_used);
  if (!a.white_box) black_box_scores(st.model, cd, set);

  AuditReport r;
  r.learner = "primorl";
  r.kind =
      "one-run audit of trajectory-level DP-FedAvg (PriMORL model stage; Steinke, Nasr and "
      "Jagielski, NeurIPS 2023)";
  r.mode = a.white_box ? "white-box" : "black-box";
  r.mis_specify = a.mis_specify;
  // the claim: the run's RDP ledger at the rounds trained, at the configured z and q
  privacy::Ledger claim(1e12, p.delta, "rdp");
  claim.charge(event, std::max<std::int64_t>(res.rounds, 1), "audited rounds");
  r.epsilon_claimed = claim.spent_epsilon();
  r.delta = p.delta;
  r.confidence = a.confidence;
  tally_canaries(set, a.guesses, r);
  nlohmann::ordered_json d;
  d["accountant"] = "rdp";
  d["rounds"] = res.rounds;
  d["run_trajectories"] = K;
  d["sampling_rate"] = p.q;
  d["noise_multiplier"] = p.z;
  d["clip_norm"] = p.clip_norm;
  d["clipping"] = p.clipping;
  d["noise_sd_sum"] = cfg.z * cfg.clip_norm * mis_noise_factor(a.mis_specify);
  d["clients"] = res.clients;
  if (tap) {
    d["canary_norm"] = tap->norm();
    d["noise_sd_estimated"] = tap->sd_seen();
  } else {
    d["canary_length"] = cd.length;
  }
  d["noise_source"] = source->name();
  d["model_best_test_mse"] = res.best_test_mse;
  r.details_json = d.dump();
  return r;
}

}  // namespace dprl::algos
