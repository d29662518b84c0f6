#include "privacy/audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/error.hpp"
#include "privacy/root_finding.hpp"
#include "privacy/special_math.hpp"

namespace dprl::privacy::audit {

namespace {

void check_alpha(double alpha) {
  if (!(alpha > 0.0 && alpha < 1.0)) {
    throw ParamError(fmt::format("audit: alpha = {} must be in (0, 1)", alpha));
  }
}

void check_counts(std::int64_t k, std::int64_t n) {
  if (n < 1) throw ParamError(fmt::format("audit: n = {} must be >= 1", n));
  if (k < 0 || k > n) throw ParamError(fmt::format("audit: k = {} must be in [0, n = {}]", k, n));
}

void check_finite(std::span<const double> v, const char* what) {
  if (v.empty()) throw ParamError(fmt::format("audit: {} must not be empty", what));
  for (double x : v) {
    if (!std::isfinite(x)) throw ParamError(fmt::format("audit: {} holds {}", what, x));
  }
}

}  // namespace

double beta_quantile(double a, double b, double p) {
  if (!(a > 0.0) || !(b > 0.0) || !std::isfinite(a) || !std::isfinite(b)) {
    throw ParamError(fmt::format("beta quantile: a = {}, b = {} must be finite and > 0", a, b));
  }
  if (!(p >= 0.0 && p <= 1.0)) {
    throw ParamError(fmt::format("beta quantile: p = {} must be in [0, 1]", p));
  }
  if (p == 0.0 || p == 1.0) return p;
  // I_x(a, b) increases from 0 to 1 in x: bisection keeps I(lo) < p <= I(hi)
  const auto below = [&](double x) { return math::incomplete_beta(a, b, x) < p ? 1.0 : -1.0; };
  return find_boundary(below, 0.0, 1.0, {.rel_tol = 0.0, .abs_tol = 1e-15}).hi;
}

double clopper_pearson_upper(std::int64_t k, std::int64_t n, double alpha) {
  check_counts(k, n);
  check_alpha(alpha);
  if (k == n) return 1.0;
  return beta_quantile(double(k) + 1.0, double(n - k), 1.0 - alpha);
}

double clopper_pearson_lower(std::int64_t k, std::int64_t n, double alpha) {
  check_counts(k, n);
  check_alpha(alpha);
  if (k == 0) return 0.0;
  // the bisection returns the upper end of its last bracket: step back one tolerance so the
  // bound stays on the conservative side
  return std::max(0.0, beta_quantile(double(k), double(n - k) + 1.0, alpha) - 1e-15);
}

double epsilon_from_error_rates(double fpr, double fnr, double delta) {
  if (!(fpr >= 0.0 && fpr <= 1.0) || !(fnr >= 0.0 && fnr <= 1.0)) {
    throw ParamError(
        fmt::format("audit: error rates FPR = {}, FNR = {} must be in [0, 1]", fpr, fnr));
  }
  if (!(delta >= 0.0 && delta < 1.0)) {
    throw ParamError(fmt::format("audit: delta = {} must be in [0, 1)", delta));
  }
  auto one = [&](double num, double den) {
    if (num <= 0.0) return 0.0;
    if (den == 0.0) return math::kInf;
    return std::max(0.0, std::log(num / den));
  };
  return std::max(one(1.0 - delta - fnr, fpr), one(1.0 - delta - fpr, fnr));
}

AuditResult audit_scalar(std::span<const double> s0, std::span<const double> s1,
                         std::span<const double> thresholds, double delta, double alpha) {
  check_finite(s0, "samples under D");
  check_finite(s1, "samples under D'");
  check_finite(thresholds, "thresholds");
  check_alpha(alpha);
  const auto n0 = static_cast<std::int64_t>(s0.size());
  const auto n1 = static_cast<std::int64_t>(s1.size());
  // every set uses two one-sided intervals: 2K in all (union bound)
  const double a = alpha / (2.0 * double(thresholds.size()));
  std::vector<double> sorted0(s0.begin(), s0.end()), sorted1(s1.begin(), s1.end());
  std::sort(sorted0.begin(), sorted0.end());
  std::sort(sorted1.begin(), sorted1.end());
  auto count_at_least = [](const std::vector<double>& v, double t) {
    return static_cast<std::int64_t>(v.end() - std::lower_bound(v.begin(), v.end(), t));
  };
  AuditResult best;
  for (double t : thresholds) {
    const std::int64_t in0 = count_at_least(sorted0, t);        // D's samples in S
    const std::int64_t out1 = n1 - count_at_least(sorted1, t);  // D''s samples outside S
    const double fpr = clopper_pearson_upper(in0, n0, a);
    const double fnr = clopper_pearson_upper(out1, n1, a);
    const double eps = epsilon_from_error_rates(fpr, fnr, delta);
    if (eps > best.epsilon) best = {eps, t, fpr, fnr};
  }
  return best;
}

}  // namespace dprl::privacy::audit
