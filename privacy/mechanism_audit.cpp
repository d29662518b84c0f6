#include "privacy/mechanism_audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "engine/error.hpp"
#include "engine/json_number.hpp"
#include "privacy/audit.hpp"
#include "privacy/audit_classifier.hpp"
#include "privacy/dirichlet_mechanism.hpp"
#include "privacy/gaussian_mechanism.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/secure_release.hpp"
#include "privacy/secure_sampling.hpp"
#include "privacy/sparse_vector.hpp"

namespace dprl::privacy::audit {

namespace {

constexpr double kDiscreteGrid = 1.0 / 16.0;  // g of the discrete kinds (a power of two)

// the statistic of one run of the mechanism on input x (a position along the difference)
using Sampler = std::function<double(double x, NoiseSource& noise)>;
// the whole output of one run of a vector mechanism (d values into out)
using VectorSampler = std::function<void(double x, NoiseSource& noise, std::span<double> out)>;

// the classifier's training draws per input: at most half the samples, at most this many
constexpr std::int64_t kMaxTrainDraws = 100000;
constexpr int kClassifierSets = 48;
constexpr int kMaxClassifierDim = 64;

struct Plan {
  Sampler sample;
  VectorSampler draw;          // vector kinds only
  std::vector<double> unit;    // their projection direction u
  double claim = 0.0;
  double delta = 0.0;
  double scale = 0.0;  // of the mechanism as run
  std::vector<double> thresholds;
  std::string statistic;
};

bool is(const MechanismAuditParams& p, const char* name) { return p.mechanism == name; }

bool vector_kind(const MechanismAuditParams& p) {
  return is(p, "gaussian") || is(p, "laplace") || is(p, "analytic-gaussian");
}

// "auto": the projection and the classifier for vector outputs (d in [2, 64]), else the projection
std::string resolved_attack(const MechanismAuditParams& p) {
  if (p.attack != "auto") return p.attack;
  return vector_kind(p) && p.dim >= 2 && p.dim <= kMaxClassifierDim ? "both" : "projection";
}

double noise_factor(const MechanismAuditParams& p) {
  if (p.mis_specify == "halve-noise") return 0.5;
  if (p.mis_specify == "quarter-noise") return 0.25;
  return 1.0;
}

std::vector<double> location_thresholds(double x0, double x1, double scale) {
  std::vector<double> t;
  for (int j = -8; j <= 40; ++j) t.push_back(0.5 * (x0 + x1) + scale * j / 4.0);
  return t;
}

void validate(const MechanismAuditParams& p) {
  static const char* kKinds[] = {"gaussian",          "laplace",          "analytic-gaussian",
                                 "discrete-gaussian", "discrete-laplace", "svt",
                                 "dirichlet"};
  if (std::find_if(std::begin(kKinds), std::end(kKinds),
                   [&](const char* k) { return p.mechanism == k; }) == std::end(kKinds)) {
    throw ParamError(fmt::format(
        "--mechanism = {} is unknown (gaussian, laplace, analytic-gaussian, discrete-gaussian, "
        "discrete-laplace, svt, dirichlet)",
        p.mechanism));
  }
  if (p.mis_specify != "none" && p.mis_specify != "halve-noise" &&
      p.mis_specify != "quarter-noise" && p.mis_specify != "double-sensitivity" &&
      p.mis_specify != "unnoised-coordinate") {
    throw ParamError(fmt::format(
        "--mis-specify = {} is unknown (halve-noise, quarter-noise, double-sensitivity, "
        "unnoised-coordinate)",
        p.mis_specify));
  }
  if (p.attack != "auto" && p.attack != "projection" && p.attack != "classifier" &&
      p.attack != "both")
    throw ParamError(
        fmt::format("--attack = {} is unknown (auto, projection, classifier, both)", p.attack));
  if (p.samples < 1 || p.samples > 100000000)
    throw ParamError(fmt::format("--samples = {} must be in [1, 1e8]", p.samples));
  if (!(p.confidence > 0.0 && p.confidence < 1.0))
    throw ParamError(fmt::format("--confidence = {} must be in (0, 1)", p.confidence));
  if (p.dim < 1 || p.dim > 4096)
    throw ParamError(fmt::format("--dim = {} must be in [1, 4096]", p.dim));
  const bool vector = vector_kind(p);
  if (p.dim > 1 && !vector)
    throw ParamError(
        fmt::format("--dim = {} needs a vector mechanism (gaussian, laplace, "
                    "analytic-gaussian)",
                    p.dim));
  if (p.secure && !vector)
    throw ParamError("--secure applies to gaussian, laplace and analytic-gaussian");
  if (p.mis_specify == "unnoised-coordinate" && !(vector && p.dim >= 2))
    throw ParamError(
        "--mis-specify unnoised-coordinate needs a vector mechanism (gaussian, laplace, "
        "analytic-gaussian) with --dim >= 2");
  if ((p.attack == "classifier" || p.attack == "both") &&
      !(vector && p.dim >= 2 && p.dim <= kMaxClassifierDim))
    throw ParamError(fmt::format(
        "--attack {} needs a vector mechanism (gaussian, laplace, analytic-gaussian) with --dim "
        "in [2, {}]",
        p.attack, kMaxClassifierDim));
  if (resolved_attack(p) != "projection" && p.samples < 4)
    throw ParamError(
        fmt::format("--samples = {} is too few for the classifier (at least 4)", p.samples));
  if (is(p, "dirichlet") && p.mis_specify == "double-sensitivity")
    throw ParamError(
        "--mis-specify double-sensitivity does not apply to dirichlet (the moved input "
        "would leave the domain eta = 0.25); use halve-noise or quarter-noise");
  if (p.has_pair) {
    if (is(p, "svt") || is(p, "dirichlet"))
      throw ParamError(fmt::format("--pair does not apply to {} (its pair is fixed)", p.mechanism));
    if (!std::isfinite(p.x0) || !std::isfinite(p.x1) || p.x0 == p.x1)
      throw ParamError(
          fmt::format("--pair = {},{} must be two distinct finite values", p.x0, p.x1));
  }
  if (!std::isnan(p.noise_multiplier) &&
      !(p.noise_multiplier > 0.0 && std::isfinite(p.noise_multiplier)))
    throw ParamError(
        fmt::format("--noise-multiplier = {} must be finite and > 0", p.noise_multiplier));
  if (!std::isnan(p.epsilon) && !(p.epsilon > 0.0 && std::isfinite(p.epsilon)))
    throw ParamError(fmt::format("--epsilon = {} must be finite and > 0", p.epsilon));
  if (!std::isnan(p.claim_epsilon) && !(p.claim_epsilon >= 0.0 && std::isfinite(p.claim_epsilon)))
    throw ParamError(fmt::format("--claim-epsilon = {} must be finite and >= 0", p.claim_epsilon));
  if (!std::isnan(p.delta) && !(p.delta >= 0.0 && p.delta < 1.0))
    throw ParamError(fmt::format("--delta = {} must be in [0, 1)", p.delta));
  if (!(p.concentration > 0.0 && p.concentration <= 1e6))
    throw ParamError(fmt::format("--concentration = {} must be in (0, 1e6]", p.concentration));
  const bool by_z = !std::isnan(p.noise_multiplier), by_eps = !std::isnan(p.epsilon);
  if (is(p, "dirichlet")) {
    if (by_z || by_eps)
      throw ParamError("dirichlet takes --concentration, not --noise-multiplier or --epsilon");
  } else if (by_z == by_eps) {
    throw ParamError(
        fmt::format("{} needs exactly one of --noise-multiplier and --epsilon", p.mechanism));
  }
  if (is(p, "svt") && by_z)
    throw ParamError("svt is calibrated by --epsilon, not --noise-multiplier");
}

double project(std::span<const double> v, std::span<const double> u) {
  double s = 0.0;
  for (std::size_t i = 0; i < v.size(); ++i) s += v[i] * u[i];
  return s;
}

// Vector kinds: the release of the input x u (x a position along the difference, u the unit
// difference direction: (1, ..., 1) / sqrt(d) for gaussian, e_1 for laplace); the statistic is
// the projection <y, u>. unnoised-coordinate releases the last coordinate without noise (an
// off-by-one in a noise loop).
void set_vector_sampler(Plan& plan, const MechanismAuditParams& p, double scale, double sens,
                        bool gaussian) {
  const int d = p.dim;
  plan.unit.assign(static_cast<std::size_t>(d), 0.0);
  if (gaussian) {
    std::fill(plan.unit.begin(), plan.unit.end(), 1.0 / std::sqrt(double(d)));
  } else {
    plan.unit[0] = 1.0;
  }
  const bool secure = p.secure, unnoised = p.mis_specify == "unnoised-coordinate";
  plan.draw = [u = plan.unit, scale, sens, gaussian, secure, unnoised](
                  double x, NoiseSource& noise, std::span<double> v) {
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = x * u[i];
    const double last = v.back();
    if (secure) {
      secure_release(v, gaussian ? SecureNoise::kGaussian : SecureNoise::kLaplace, scale, sens,
                     noise);
    } else if (gaussian) {
      for (double& e : v) e += noise.gaussian(scale);
    } else {
      for (double& e : v) e += noise.laplace(scale);
    }
    if (unnoised) v.back() = last;
  };
  plan.sample = [draw = plan.draw, u = plan.unit](double x, NoiseSource& noise) {
    thread_local std::vector<double> v;
    v.resize(u.size());
    draw(x, noise, v);
    return project(v, u);
  };
}

Plan make_plan(const MechanismAuditParams& p) {
  Plan plan;
  const double f = noise_factor(p);
  const bool by_z = !std::isnan(p.noise_multiplier);
  const double x0 = p.x0, x1 = p.x1;
  const double sens = std::abs(x1 - x0);  // the claim is for this distance
  if (is(p, "gaussian") || is(p, "analytic-gaussian") || is(p, "discrete-gaussian")) {
    plan.delta = std::isnan(p.delta) ? 1e-5 : p.delta;
    if (!(plan.delta > 0.0)) throw ParamError("--delta must be > 0 for Gaussian mechanisms");
    double sigma;
    if (by_z) {
      sigma = p.noise_multiplier * sens;
    } else if (is(p, "analytic-gaussian")) {
      sigma = analytic_gaussian_sigma(p.epsilon, plan.delta, sens);
    } else {
      if (!(p.epsilon < 1.0))
        throw ParamError(
            fmt::format("--epsilon = {} must be < 1 for the classical calibration "
                        "(use analytic-gaussian or --noise-multiplier)",
                        p.epsilon));
      sigma = classical_gaussian_sigma(p.epsilon, plan.delta, sens);
    }
    plan.claim = by_z ? gaussian_epsilon(sigma / sens, plan.delta) : p.epsilon;
    plan.scale = sigma * f;
    plan.thresholds = location_thresholds(x0, x1, sigma);
    if (is(p, "discrete-gaussian")) {
      const double s = plan.scale;
      plan.sample = [s](double x, NoiseSource& noise) {
        return x + secure_gaussian(s, kDiscreteGrid, [&noise] { return noise.next_u64(); });
      };
      plan.statistic = "output (grid 1/16)";
    } else {
      set_vector_sampler(plan, p, plan.scale, sens, true);
      plan.statistic = p.dim > 1 ? "<y, u>, u = (1, ..., 1) / sqrt(d)" : "output";
    }
  } else if (is(p, "laplace") || is(p, "discrete-laplace")) {
    plan.delta = std::isnan(p.delta) ? 0.0 : p.delta;
    const double b = by_z ? p.noise_multiplier * sens : sens / p.epsilon;
    plan.claim = sens / b;
    plan.scale = b * f;
    plan.thresholds = location_thresholds(x0, x1, b);
    if (is(p, "discrete-laplace")) {
      const double s = plan.scale;
      plan.sample = [s](double x, NoiseSource& noise) {
        return x + secure_laplace(s, kDiscreteGrid, [&noise] { return noise.next_u64(); });
      };
      plan.statistic = "output (grid 1/16)";
    } else {
      set_vector_sampler(plan, p, plan.scale, sens, false);
      plan.statistic = p.dim > 1 ? "y_1 (the difference is on e_1)" : "output";
    }
  } else if (is(p, "svt")) {
    plan.delta = std::isnan(p.delta) ? 0.0 : p.delta;
    plan.claim = p.epsilon;
    const double eps_run = p.epsilon / f;  // the noise scales are 2 / eps and 4 / eps
    plan.scale = eps_run;
    plan.thresholds = {0.5};
    plan.statistic = "1[halted at the seventh query]";
    // D: 6 x 0 then 0; D': 6 x m then -m, m = 1 or 2 (double-sensitivity)
    const double m = p.mis_specify == "double-sensitivity" ? 2.0 : 1.0;
    // halting at the seventh query is likelier under D: D takes the role of x = 1 (the input
    // the sets {s >= t} favour), D' of x = 0
    plan.sample = [eps_run, m](double x, NoiseSource& noise) {
      AboveThreshold at({eps_run, 0.0, 1.0}, noise);
      const bool d = x != 0.0;
      const double early = d ? 0.0 : m, last = d ? 0.0 : -m;
      for (int j = 0; j < 6; ++j) {
        if (at.query(early)) return 0.0;
      }
      return at.query(last) ? 1.0 : 0.0;
    };
  } else {  // dirichlet
    DirichletParams dp{p.concentration, 0.25, 0.1, 2, 1.0, 0.5};
    plan.claim = dirichlet_epsilon(dp);
    plan.delta = std::isnan(p.delta) ? dirichlet_delta_exact_m2(dp.k, dp.eta, dp.tau) : p.delta;
    DirichletParams run = dp;
    run.k = dp.k / (f * f);  // std of a Dirichlet coordinate ~ 1 / sqrt(k)
    plan.scale = run.k;
    for (int j = 1; j <= 19; ++j) plan.thresholds.push_back(0.05 * j);
    plan.statistic = "x_1";
    const double move = dp.lipschitz * dp.adjacency / std::sqrt(2.0);
    const auto mech = std::make_shared<DirichletMechanism>(run);
    // x = 1 is D' (moved by move x m), x = 0 is D
    const double m = p.mis_specify == "double-sensitivity" ? 2.0 : 1.0;
    plan.sample = [mech, move, m](double x, NoiseSource& noise) {
      // D' lies toward the first action; the density ratio then increases in x_1
      const double shift = x * move * m;
      const double pi[2] = {0.25 + shift, 0.75 - shift};
      double out[2];
      mech->release({pi, 2}, out, noise);
      return out[0];
    };
  }
  if (!std::isnan(p.claim_epsilon)) plan.claim = p.claim_epsilon;
  return plan;
}

}  // namespace

namespace {

// What one input's runs give: the projection statistic of every run and, with the classifier,
// the classifier's scores of the held-out runs.
struct Draws {
  std::vector<double> stat, score;
};

struct Samples {
  Draws d0, d1;
  std::vector<double> classifier_thresholds;
  std::int64_t train = 0;  // training draws per input
};

void draw_rows(const Plan& plan, double x, double sign, NoiseSource& noise,
               std::span<double> rows, std::vector<double>& stat) {
  const std::size_t d = plan.unit.size();
  for (std::size_t r = 0; r < rows.size() / d; ++r) {
    const auto v = rows.subspan(r * d, d);
    plan.draw(x, noise, v);
    stat.push_back(sign * project(v, plan.unit));
  }
}

// Each input's noise stream is consumed in run order (the classifier's training runs first), so
// the projection sees the same runs whether or not the classifier is fitted.
Samples sample(const MechanismAuditParams& p, const Plan& plan, double x0, double x1,
               double sign, bool classify) {
  Samples out;
  const auto n = static_cast<std::size_t>(p.samples);
  auto noise0 = make_seeded_noise(p.seed, 0, 0, p.secure);
  auto noise1 = make_seeded_noise(p.seed, 1, 0, p.secure);
  out.d0.stat.reserve(n);
  out.d1.stat.reserve(n);
  if (!classify) {
    for (std::size_t i = 0; i < n; ++i) out.d0.stat.push_back(sign * plan.sample(x0, *noise0));
    for (std::size_t i = 0; i < n; ++i) out.d1.stat.push_back(sign * plan.sample(x1, *noise1));
    return out;
  }
  const std::size_t d = plan.unit.size();
  out.train = std::min<std::int64_t>(p.samples / 2, kMaxTrainDraws);
  const auto train = static_cast<std::size_t>(out.train);
  std::vector<double> rows0(train * d), rows1(train * d);
  draw_rows(plan, x0, sign, *noise0, rows0, out.d0.stat);
  draw_rows(plan, x1, sign, *noise1, rows1, out.d1.stat);
  const GaussianDiscriminant classifier(rows0, rows1, p.dim);
  std::vector<double> score0(train), score1(train);
  classifier.score(rows0, score0);
  classifier.score(rows1, score1);
  out.classifier_thresholds = classifier_thresholds(score0, score1, kClassifierSets);
  const auto held_out = [&](double x, NoiseSource& noise, Draws& draws) {
    std::vector<double> rows;
    for (std::size_t left = n - train; left > 0;) {
      const std::size_t m = std::min<std::size_t>(left, 4096);
      rows.resize(m * d);
      draw_rows(plan, x, sign, noise, rows, draws.stat);
      draws.score.resize(draws.score.size() + m);
      classifier.score(rows, std::span(draws.score).last(m));
      left -= m;
    }
  };
  held_out(x0, *noise0, out.d0);
  held_out(x1, *noise1, out.d1);
  return out;
}

double fraction_at_or_above(const std::vector<double>& s, double t) {
  const auto k = std::count_if(s.begin(), s.end(), [&](double v) { return v >= t; });
  return double(k) / double(s.size());
}

}  // namespace

MechanismAuditReport audit_mechanism(const MechanismAuditParams& p) {
  validate(p);
  Plan plan = make_plan(p);
  const std::string attack = resolved_attack(p);
  const bool fixed_pair = is(p, "svt") || is(p, "dirichlet");
  double x0 = fixed_pair ? 0.0 : p.x0, x1 = fixed_pair ? 1.0 : p.x1;
  if (p.mis_specify == "double-sensitivity" && !fixed_pair) x1 = x0 + 2.0 * (x1 - x0);
  // sets {s >= t} favour the larger input: orient the statistic so that D' is the larger
  const double sign = (fixed_pair || p.x1 > p.x0) ? 1.0 : -1.0;
  std::vector<double> thresholds = plan.thresholds;
  if (sign < 0) {
    for (double& t : thresholds) t = -(p.x0 + p.x1) + t;  // mirror about the midpoint
  }
  const bool projection = attack != "classifier", classify = attack != "projection";
  const Samples smp = sample(p, plan, x0, x1, sign, classify);

  // Bonferroni over the sets of both statistics: alpha shared in proportion to their counts
  const double alpha = 1.0 - p.confidence;
  const double k1 = projection ? double(thresholds.size()) : 0.0;
  const double k2 = double(smp.classifier_thresholds.size());
  AuditResult best;
  bool by_classifier = false;
  if (projection)
    best = audit_scalar(smp.d0.stat, smp.d1.stat, thresholds, plan.delta, alpha * k1 / (k1 + k2));
  if (classify) {
    const AuditResult c = audit_scalar(smp.d0.score, smp.d1.score, smp.classifier_thresholds,
                                       plan.delta, alpha * k2 / (k1 + k2));
    if (!projection || c.epsilon > best.epsilon) {
      best = c;
      by_classifier = true;
    }
  }

  MechanismAuditReport rep;
  rep.epsilon_claimed = plan.claim;
  rep.epsilon_lower = best.epsilon;
  rep.delta = plan.delta;
  rep.confidence = p.confidence;
  rep.refuted = best.epsilon > plan.claim;
  rep.samples = p.samples;
  rep.noise_scale = plan.scale;
  rep.attack = attack;
  rep.classifier_train = smp.train;
  rep.statistic = by_classifier ? "classifier score (fitted Gaussian log likelihood ratio)"
                  : sign > 0    ? plan.statistic
                                : "-(" + plan.statistic + ")";
  rep.threshold = best.threshold;
  rep.fpr_upper = best.fpr_upper;
  rep.fnr_upper = best.fnr_upper;
  rep.sets = static_cast<int>(k1 + k2);
  if (best.epsilon > 0.0) {
    const auto& v0 = by_classifier ? smp.d0.score : smp.d0.stat;
    const auto& v1 = by_classifier ? smp.d1.score : smp.d1.stat;
    rep.fpr = fraction_at_or_above(v0, best.threshold);
    rep.fnr = 1.0 - fraction_at_or_above(v1, best.threshold);
  }
  return rep;
}

std::string mechanism_audit_json(const MechanismAuditParams& p, const MechanismAuditReport& r) {
  return nlohmann::ordered_json{{"mechanism", p.mechanism},
                                {"mis_specify", p.mis_specify},
                                {"epsilon_claimed", json_number(r.epsilon_claimed)},
                                {"epsilon_lower", json_number(r.epsilon_lower)},
                                {"delta", r.delta},
                                {"confidence", r.confidence},
                                {"refuted", r.refuted},
                                {"samples", r.samples},
                                {"seed", p.seed},
                                {"noise_scale", r.noise_scale},
                                {"sets", r.sets},
                                {"attack", r.attack},
                                {"classifier_train", r.classifier_train},
                                {"best_event",
                                 {{"set", fmt::format("{} >= t", r.statistic)},
                                  {"threshold", r.threshold},
                                  {"fpr", r.fpr},
                                  {"fnr", r.fnr},
                                  {"fpr_upper", r.fpr_upper},
                                  {"fnr_upper", r.fnr_upper}}}}
      .dump();
}

}  // namespace dprl::privacy::audit
