#include "privacy/composition.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"
#include "privacy/root_finding.hpp"

namespace dprl::privacy {

namespace {

void check_eps0(double eps0) {
  if (!(eps0 > 0.0) || !std::isfinite(eps0)) {
    throw ParamError(fmt::format("epsilon = {} must be finite and > 0", eps0));
  }
}
void check_delta0(double d) {
  if (!(d >= 0.0 && d < 1.0)) throw ParamError(fmt::format("delta = {} must be in [0, 1)", d));
}
void check_k(std::int64_t k) {
  if (k < 1) throw ParamError(fmt::format("count k = {} must be >= 1", k));
}
void check_open_unit(double d, const char* name) {
  if (!(d > 0.0 && d < 1.0)) throw ParamError(fmt::format("{} = {} must be in (0, 1)", name, d));
}
void check_rho(double rho) {
  if (!(rho > 0.0) || !std::isfinite(rho)) {
    throw ParamError(fmt::format("rho = {} must be finite and > 0", rho));
  }
}

double advanced_eps(double eps0, double k, double delta_slack) {
  return std::sqrt(2.0 * k * std::log(1.0 / delta_slack)) * eps0 + k * eps0 * std::expm1(eps0);
}

}  // namespace

EpsDelta basic_composition(double eps0, double delta0, std::int64_t k) {
  check_eps0(eps0);
  check_delta0(delta0);
  check_k(k);
  return {k * eps0, std::min(1.0, k * delta0)};
}

EpsDelta advanced_composition(double eps0, double delta0, std::int64_t k, double delta_slack) {
  check_eps0(eps0);
  check_delta0(delta0);
  check_k(k);
  check_open_unit(delta_slack, "delta_slack");
  return {advanced_eps(eps0, static_cast<double>(k), delta_slack),
          std::min(1.0, k * delta0 + delta_slack)};
}

double advanced_composition_inverse(double eps, std::int64_t k, double delta_slack) {
  check_eps0(eps);
  check_k(k);
  check_open_unit(delta_slack, "delta_slack");
  // advanced_eps is increasing in eps0: bisect for the boundary of "total exceeds eps" and return
  // the lower end (its total stays <= eps)
  auto exceeds = [&](double e0) {
    return !(advanced_eps(e0, static_cast<double>(k), delta_slack) <= eps);
  };
  // (b->lo is 0 when even the smallest power of two tried exceeds: advanced_eps(0) = 0 does not)
  const auto b = bracket_geometric(exceeds, eps, 1e-300, 1e300);
  if (!b) throw ParamError(fmt::format("advanced composition: no epsilon0 exceeds {}", eps));
  return find_boundary([&](double e0) { return exceeds(e0) ? -1.0 : 1.0; }, b->lo, b->hi, {1e-15})
      .lo;
}

double advanced_composition_inverse_dr(double eps, std::int64_t k, double delta_slack) {
  check_eps0(eps);
  check_k(k);
  check_open_unit(delta_slack, "delta_slack");
  return eps / (2.0 * std::sqrt(2.0 * k * std::log(1.0 / delta_slack)));
}

double zcdp_to_epsilon_bun_steinke(double rho, double delta) {
  check_rho(rho);
  check_open_unit(delta, "delta");
  return rho + 2.0 * std::sqrt(rho * std::log(1.0 / delta));
}

double zcdp_to_epsilon_cks(double rho, double delta) {
  check_rho(rho);
  check_open_unit(delta, "delta");
  const double log_inv_delta = std::log(1.0 / delta);
  auto f = [&](double a) {
    return rho * a + std::log1p(-1.0 / a) + (log_inv_delta - std::log(a)) / (a - 1.0);
  };
  // golden-section search on log(a - 1) over [-20, ln 1e7]
  double lo = -20.0, hi = std::log(1e7);
  const double r = (std::sqrt(5.0) - 1.0) / 2.0;
  double x1 = hi - r * (hi - lo), x2 = lo + r * (hi - lo);
  double f1 = f(1.0 + std::exp(x1)), f2 = f(1.0 + std::exp(x2));
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    if (f1 < f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - r * (hi - lo);
      f1 = f(1.0 + std::exp(x1));
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + r * (hi - lo);
      f2 = f(1.0 + std::exp(x2));
    }
  }
  // never above Bun-Steinke; a NaN minimum (not expected for valid inputs) takes Bun-Steinke's
  // value instead of std::min's first argument, so it cannot become 0 below
  double eps = std::min(f1, f2);
  const double bs = zcdp_to_epsilon_bun_steinke(rho, delta);
  if (!(eps <= bs)) eps = bs;
  return std::max(0.0, eps);
}

}  // namespace dprl::privacy
