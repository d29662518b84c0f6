#include "privacy/mechanism_audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "engine/error.hpp"
#include "privacy/audit.hpp"
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

struct Plan {
  Sampler sample;
  double claim = 0.0;
  double delta = 0.0;
  double scale = 0.0;  // of the mechanism as run
  std::vector<double> thresholds;
  std::string statistic;
};

bool is(const MechanismAuditParams& p, const char* name) { return p.mechanism == name; }

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
      p.mis_specify != "quarter-noise" && p.mis_specify != "double-sensitivity") {
    throw ParamError(fmt::format(
        "--mis-specify = {} is unknown (halve-noise, quarter-noise, double-sensitivity)",
        p.mis_specify));
  }
  if (p.samples < 1 || p.samples > 100000000)
    throw ParamError(fmt::format("--samples = {} must be in [1, 1e8]", p.samples));
  if (!(p.confidence > 0.0 && p.confidence < 1.0))
    throw ParamError(fmt::format("--confidence = {} must be in (0, 1)", p.confidence));
  if (p.dim < 1 || p.dim > 4096)
    throw ParamError(fmt::format("--dim = {} must be in [1, 4096]", p.dim));
  const bool vector_kind = is(p, "gaussian") || is(p, "laplace") || is(p, "analytic-gaussian");
  if (p.dim > 1 && !vector_kind)
    throw ParamError(
        fmt::format("--dim = {} needs a vector mechanism (gaussian, laplace, "
                    "analytic-gaussian)",
                    p.dim));
  if (p.secure && !vector_kind)
    throw ParamError("--secure applies to gaussian, laplace and analytic-gaussian");
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

// (x0, x1) positions; statistic = projection on the unit difference direction
Sampler vector_sampler(const MechanismAuditParams& p, double scale, double sens, bool gaussian) {
  const int d = p.dim;
  // gaussian: u = (1, ..., 1) / sqrt(d); laplace: u = e_1
  const double ui = gaussian ? 1.0 / std::sqrt(double(d)) : 0.0;
  const bool secure = p.secure;
  return [d, ui, scale, sens, gaussian, secure](double x, NoiseSource& noise) {
    thread_local std::vector<double> v;
    v.assign(static_cast<std::size_t>(d), 0.0);
    if (gaussian) {
      for (double& e : v) e = x * ui;
    } else {
      v[0] = x;
    }
    if (secure) {
      secure_release(v, gaussian ? SecureNoise::kGaussian : SecureNoise::kLaplace, scale, sens,
                     noise);
    } else if (gaussian) {
      for (double& e : v) e += noise.gaussian(scale);
    } else {
      for (double& e : v) e += noise.laplace(scale);
    }
    if (!gaussian) return v[0];
    double s = 0.0;
    for (double e : v) s += e * ui;
    return s;
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
      plan.sample = vector_sampler(p, plan.scale, sens, true);
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
      plan.sample = vector_sampler(p, plan.scale, sens, false);
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

MechanismAuditReport audit_mechanism(const MechanismAuditParams& p) {
  validate(p);
  Plan plan = make_plan(p);
  const bool fixed_pair = is(p, "svt") || is(p, "dirichlet");
  double x0 = fixed_pair ? 0.0 : p.x0, x1 = fixed_pair ? 1.0 : p.x1;
  if (p.mis_specify == "double-sensitivity" && !fixed_pair) x1 = x0 + 2.0 * (x1 - x0);
  // sets {s >= t} favour the larger input: orient the statistic so that D' is the larger
  const double sign = (fixed_pair || p.x1 > p.x0) ? 1.0 : -1.0;
  std::vector<double> thresholds = plan.thresholds;
  if (sign < 0) {
    for (double& t : thresholds) t = -(p.x0 + p.x1) + t;  // mirror about the midpoint
  }
  const auto n = static_cast<std::size_t>(p.samples);
  std::vector<double> s0(n), s1(n);
  auto noise0 = make_seeded_noise(p.seed, 0, 0, p.secure);
  auto noise1 = make_seeded_noise(p.seed, 1, 0, p.secure);
  for (std::size_t i = 0; i < n; ++i) s0[i] = sign * plan.sample(x0, *noise0);
  for (std::size_t i = 0; i < n; ++i) s1[i] = sign * plan.sample(x1, *noise1);
  const double alpha = 1.0 - p.confidence;
  const AuditResult r = audit_scalar(s0, s1, thresholds, plan.delta, alpha);

  MechanismAuditReport rep;
  rep.epsilon_claimed = plan.claim;
  rep.epsilon_lower = r.epsilon;
  rep.delta = plan.delta;
  rep.confidence = p.confidence;
  rep.refuted = r.epsilon > plan.claim;
  rep.samples = p.samples;
  rep.noise_scale = plan.scale;
  rep.statistic = sign > 0 ? plan.statistic : "-(" + plan.statistic + ")";
  rep.threshold = r.threshold;
  rep.fpr_upper = r.fpr_upper;
  rep.fnr_upper = r.fnr_upper;
  rep.sets = static_cast<int>(thresholds.size());
  if (r.epsilon > 0.0) {
    const auto in0 =
        std::count_if(s0.begin(), s0.end(), [&](double s) { return s >= r.threshold; });
    const auto in1 =
        std::count_if(s1.begin(), s1.end(), [&](double s) { return s >= r.threshold; });
    rep.fpr = double(in0) / double(n);
    rep.fnr = 1.0 - double(in1) / double(n);
  }
  return rep;
}

}  // namespace dprl::privacy::audit
