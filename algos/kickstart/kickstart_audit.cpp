#include "algos/kickstart/kickstart_audit.hpp"

#include <fmt/format.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "algos/kickstart/kickstart_teacher.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "privacy/audit.hpp"
#include "privacy/dirichlet_teacher.hpp"
#include "privacy/noise_source.hpp"

namespace dprl::algos {

namespace {

// psi(x) for x > 0: recurrence up to 6, then the asymptotic series
double digamma(double x) {
  double r = 0;
  while (x < 6.0) {
    r -= 1.0 / x;
    x += 1.0;
  }
  const double f = 1.0 / (x * x);
  return r + std::log(x) - 0.5 / x -
         f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

// KL(Dir(k a) || Dir(k b)) + KL(Dir(k b) || Dir(k a)) for a, b on the simplex (the normalisers
// cancel in the sum)
double symmetric_kl(const std::vector<double>& a, const std::vector<double>& b, double k) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    s += (k * a[i] - k * b[i]) * (digamma(k * a[i]) - digamma(k * b[i]));
  return s;
}

// The floored teacher policy p~ at observations.
class Floored {
 public:
  Floored(TeacherPolicy& t, double eta) : t_(t), eta_(eta), m_(t.actions()) {}
  // p~ of the n observations in obs (obs_dim x n), column per observation
  void eval(const std::vector<float>& obs, int n, std::vector<std::vector<double>>& out) {
    t_.probabilities(obs, n, probs_);
    out.assign(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(m_)));
    for (int j = 0; j < n; ++j) {
      const std::span<const double> p(probs_.col(j).data(), static_cast<std::size_t>(m_));
      privacy::eta_floor(p, eta_, out[static_cast<std::size_t>(j)]);
    }
  }
  int actions() const { return m_; }

 private:
  TeacherPolicy& t_;
  double eta_;
  int m_;
  Eigen::MatrixXd probs_;
};

struct Pair {
  std::vector<float> x, x2;
  std::vector<double> p, p2;
  double kl = -1;
};

bool inside(const Space& s, const std::vector<float>& x) {
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!(x[i] >= s.low[i] && x[i] <= s.high[i])) return false;
  return true;
}

// Observations of seeded episodes with uniform random actions (at most `cap`).
std::vector<std::vector<float>> candidates(Env& env, std::uint64_t seed, std::size_t cap) {
  const EnvSpec& spec = env.spec();
  const std::size_t D = spec.observation.dim();
  std::vector<std::vector<float>> out;
  std::vector<float> obs(D), next(D);
  Rng r(audit_stream(seed, 7));
  for (std::uint64_t e = 0; e < 64 && out.size() < cap; ++e) {
    env.reset(derive_seed(seed, Domain::kEnvReset, kAuditStream, e), obs);
    out.push_back(obs);
    for (std::int64_t t = 0; t < spec.max_episode_steps && out.size() < cap; ++t) {
      const auto a = static_cast<std::int64_t>(r.below(spec.action.n));
      const StepResult s = env.step(a, next);
      if (s.terminated || s.truncated) break;
      obs = next;
      out.push_back(obs);
    }
  }
  return out;
}

// The search described in the header: the b-adjacent pair with the largest symmetric KL.
Pair worst_pair(Floored& f, const Space& space, const std::vector<std::vector<float>>& cands,
                double b, double k) {
  const auto D = static_cast<int>(space.dim());
  const int m = f.actions();
  const double h = b / 4.0;
  Pair best;
  std::vector<float> batch;
  std::vector<std::vector<double>> p;
  for (const auto& x : cands) {
    // central differences along every axis
    batch.clear();
    for (int i = 0; i < D; ++i)
      for (const double s : {h, -h}) {
        std::vector<float> y = x;
        y[static_cast<std::size_t>(i)] += static_cast<float>(s);
        batch.insert(batch.end(), y.begin(), y.end());
      }
    f.eval(batch, 2 * D, p);
    Eigen::MatrixXd J(m, D);
    for (int i = 0; i < D; ++i)
      for (int a = 0; a < m; ++a)
        J(a, i) = (p[static_cast<std::size_t>(2 * i)][static_cast<std::size_t>(a)] -
                   p[static_cast<std::size_t>(2 * i + 1)][static_cast<std::size_t>(a)]) /
                  (2.0 * h);
    const Eigen::MatrixXd G = J.transpose() * J;
    if (!(G.norm() > 0.0) || !G.allFinite()) continue;
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(G);
    const Eigen::VectorXd v = es.eigenvectors().col(D - 1);
    for (const auto& [lo, hi] : {std::pair{-0.5, 0.5}, std::pair{0.0, 1.0}, std::pair{-1.0, 0.0}}) {
      Pair c;
      c.x = x;
      c.x2 = x;
      for (int i = 0; i < D; ++i) {
        c.x[static_cast<std::size_t>(i)] += static_cast<float>(lo * b * v[i]);
        c.x2[static_cast<std::size_t>(i)] += static_cast<float>(hi * b * v[i]);
      }
      if (!inside(space, c.x) || !inside(space, c.x2)) continue;
      batch = c.x;
      batch.insert(batch.end(), c.x2.begin(), c.x2.end());
      f.eval(batch, 2, p);
      c.p = p[0];
      c.p2 = p[1];
      c.kl = symmetric_kl(c.p, c.p2, k);
      if (std::isfinite(c.kl) && c.kl > best.kl) best = std::move(c);
    }
  }
  if (best.kl < 0 && !cands.empty()) {  // a constant teacher: any pair is as good
    best.x = best.x2 = cands.front();
    best.x2[0] += static_cast<float>(b);
    batch = best.x;
    batch.insert(batch.end(), best.x2.begin(), best.x2.end());
    f.eval(batch, 2, p);
    best.p = p[0];
    best.p2 = p[1];
    best.kl = symmetric_kl(best.p, best.p2, k);
  }
  return best;
}

// The statistic sum_i (p2_i - p_i) log y_i of n answers to the raw policy `raw`.
std::vector<double> draw(privacy::DirichletTeacher& mech, const std::vector<double>& raw,
                         const std::vector<double>& p, const std::vector<double>& p2,
                         std::int64_t n, privacy::NoiseSource& noise) {
  std::vector<double> s(static_cast<std::size_t>(n)), y(raw.size());
  for (auto& v : s) {
    mech.answer(raw, y, noise);
    double t = 0;
    for (std::size_t i = 0; i < y.size(); ++i)
      t += (p2[i] - p[i]) * std::log(std::max(y[i], 1e-300));
    v = t;
  }
  return s;
}

std::vector<double> quantiles(std::vector<double> v, const std::vector<double>& levels) {
  std::sort(v.begin(), v.end());
  std::vector<double> q;
  for (const double l : levels)
    q.push_back(
        v[std::min(v.size() - 1, static_cast<std::size_t>(l * static_cast<double>(v.size())))]);
  return q;
}

std::string teacher_key() { return "ppo_kickstart.teacher"; }

}  // namespace

void check_kickstart_audit(const PpoKickstart& learner, const EnvSpec& spec, const AuditParams& a,
                           bool teacher_exists) {
  check_audit_params(a);
  const PpoKickstartParams& p = learner.kickstart_params();
  if (p.teacher_mode != "dirichlet")
    throw ParamError(fmt::format(
        "audit: ppo_kickstart with teacher_mode {} makes no private release", p.teacher_mode));
  if (a.white_box)
    throw ParamError(
        "audit: ppo_kickstart's guarantee is per query of the teacher's Dirichlet mechanism: "
        "it is audited as a mechanism on its outputs (no white-box canaries; drop "
        "audit.white_box / --white-box)");
  std::error_code ec;
  if (!teacher_exists) return;
  if (!std::filesystem::exists(p.teacher, ec))
    throw DataError(
        fmt::format("{} = {}: the teacher's policy file does not exist (the audit "
                    "queries the run's teacher)",
                    teacher_key(), p.teacher));
  TeacherPolicy::load(p.teacher, teacher_key()).check_spaces(spec, teacher_key());
}

AuditReport audit_kickstart(const PpoKickstart& learner,
                            const std::function<std::unique_ptr<Env>()>& make_env,
                            const AuditParams& a) {
  auto env = make_env();
  check_kickstart_audit(learner, env->spec(), a);
  const PpoKickstartParams& kp = learner.kickstart_params();
  TeacherPolicy teacher = TeacherPolicy::load(kp.teacher, teacher_key());
  const auto aseed = static_cast<std::uint64_t>(a.seed);
  const int m = teacher.actions();
  // the run's per-query mechanism (no budget, never advanced: every answer at k0)
  privacy::DirichletTeacherParams d;
  d.k0 = kp.k0;
  d.k_floor = 0;
  d.eta = kp.eta;
  d.tau = kp.tau;
  d.adjacency = kp.adjacency;
  d.lipschitz = teacher.lipschitz().upper;
  d.actions = m;
  d.delta_samples = kp.delta_samples;
  d.check();
  auto mc = privacy::make_seeded_noise(audit_stream(aseed, 8), 0, 0);
  const privacy::QueryCost claim = privacy::dirichlet_query_cost(d, kp.k0, *mc);

  // the pair, at the claimed k0 (double-sensitivity: 2 b apart)
  const double b = kp.adjacency * mis_sensitivity_factor(a.mis_specify);
  Floored floored(teacher, kp.eta);
  const Pair pair =
      worst_pair(floored, env->spec().observation, candidates(*env, aseed, 512), b, kp.k0);
  std::vector<float> both = pair.x;
  both.insert(both.end(), pair.x2.begin(), pair.x2.end());
  Eigen::MatrixXd raw;
  teacher.probabilities(both, 2, raw);
  const std::vector<double> raw0(raw.col(0).data(), raw.col(0).data() + m),
      raw1(raw.col(1).data(), raw.col(1).data() + m);

  // the mechanism as run: k0 (mis-specified: x4, x16), the run's noise source kind
  const double noise_f = mis_noise_factor(a.mis_specify);
  privacy::DirichletTeacherParams run = d;
  run.k0 = kp.k0 / (noise_f * noise_f);
  privacy::DirichletTeacher mech(run, *mc);
  const bool seeded = kp.noise == "seeded";
  auto source = [&](std::uint64_t role) {
    return seeded ? privacy::make_seeded_noise(audit_stream(aseed, 6), role, 0)
                  : privacy::make_os_entropy_noise();
  };
  const std::int64_t n = a.samples, pilot = std::max<std::int64_t>(1000, n / 10);
  std::vector<double> thresholds;
  {
    auto n0 = source(0), n1 = source(1);
    const std::vector<double> levels{1e-4, 1e-3, 0.01, 0.05, 0.1,  0.2,  0.3,   0.4,   0.5,
                                     0.6,  0.7,  0.8,  0.9,  0.95, 0.99, 0.999, 0.9999};
    for (const auto* v : {&raw0, &raw1}) {
      const auto q =
          quantiles(draw(mech, *v, pair.p, pair.p2, pilot, v == &raw0 ? *n0 : *n1), levels);
      thresholds.insert(thresholds.end(), q.begin(), q.end());
    }
    std::sort(thresholds.begin(), thresholds.end());
    thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());
  }
  auto m0 = source(2), m1 = source(3);
  const std::vector<double> s0 = draw(mech, raw0, pair.p, pair.p2, n, *m0);
  const std::vector<double> s1 = draw(mech, raw1, pair.p, pair.p2, n, *m1);
  const privacy::audit::AuditResult res =
      privacy::audit::audit_scalar(s0, s1, thresholds, claim.delta, 1.0 - a.confidence);

  AuditReport r;
  r.kind =
      "black-box audit of one query of the teacher's Dirichlet mechanism (paper 003, eq. 12 "
      "and eq. 6) at the run's teacher, k0, eta, tau and b, on the worst b-adjacent pair found";
  r.mode = "mechanism";
  r.mis_specify = a.mis_specify;
  r.epsilon_claimed = claim.epsilon;
  r.epsilon_lower = res.epsilon;
  r.delta = claim.delta;
  r.confidence = a.confidence;
  r.refuted = r.epsilon_lower > r.epsilon_claimed;
  nlohmann::ordered_json j;
  j["claim"] = "per query at k0 (eq. 12, eq. 6); epsilon_reported is the run's total";
  j["samples"] = n;
  j["teacher"] = kp.teacher;
  j["k0"] = kp.k0;
  j["k_run"] = run.k0;
  j["eta"] = kp.eta;
  j["tau"] = kp.tau;
  j["adjacency"] = kp.adjacency;
  j["lipschitz"] = d.lipschitz;
  j["delta_exact"] = claim.delta_exact;
  j["pair_distance"] = b;
  j["x"] = pair.x;
  j["x_prime"] = pair.x2;
  j["policy_floored"] = pair.p;
  j["policy_floored_prime"] = pair.p2;
  j["symmetric_kl"] = pair.kl;
  j["sets"] = thresholds.size();
  j["best_event"] = {{"set", "sum_i (p'_i - p_i) log y_i >= t"},
                     {"threshold", res.threshold},
                     {"fpr_upper", res.fpr_upper},
                     {"fnr_upper", res.fnr_upper}};
  j["noise"] = kp.noise;
  r.details_json = j.dump();
  return r;
}

}  // namespace dprl::algos
