// Accountants at edge inputs: tiny and huge noise, q = 1, T = 1, delta near 0 and near 1, for
// "rdp", "pld" and "best". Every accountant returns an upper bound on the true epsilon, so each
// must lie above an exact lower bound computed here independently; none may return NaN, or 0
// where the true epsilon is large.
#include "privacy/accountant.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "privacy/best_accountant.hpp"
#include "privacy/dp_event.hpp"
#include "tests/privacy/reference.hpp"

using namespace dprl::privacy;

namespace {

// One step of the Poisson-subsampled Gaussian (remove direction: P = (1 - q) N(0, z^2) +
// q N(1, z^2), Q = N(0, z^2)) on the set S = {x > 1/2}: P(S) = (1 - q) s + q (1 - s) and
// Q(S) = s with s = 1 - Phi(1 / (2z)). (epsilon, delta)-DP needs P(S) <= e^epsilon Q(S) + delta,
// so epsilon >= log((P(S) - delta) / Q(S)); T steps cannot be more private than one.
double set_lower_bound(double z, double q, double delta) {
  const double log_s = reference::log_normal_sf(0.5 / z);
  const double s = std::exp(log_s);
  const double ps = (1.0 - q) * s + q * (1.0 - s);
  if (ps <= delta) return 0.0;
  return std::log(ps - delta) - log_s;  // +inf when s underflows in log space too (z < ~1e-154)
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE(
      "every accountant at edge inputs: above an exact lower bound - never NaN or a silent 0") {
    // best.epsilon_parts() gives the rdp and pld accountants' values (one PLD evaluation per
    // delta). Tiny noise is checked at small delta, where PLD's +inf mass decides at once;
    // larger delta there means building PLD's full 2^22-point grid, which the pld tests cover.
    struct Sweep {
      std::vector<double> zs, deltas;
    };
    const Sweep sweeps[] = {{{1e-160, 1e-150, 1e-3, 0.02}, {1e-300, 1e-12, 1e-5}},
                            {{1.5, 3.0, 1e3, 1e6}, {1e-300, 1e-12, 1e-5, 0.5, 1.0 - 1e-12}}};
    for (const Sweep& sw : sweeps) {
      for (double z : sw.zs) {
        for (double q : {0.01, 1.0}) {
          for (std::int64_t t : {1, 3}) {
            BestAccountant best;
            best.compose(dpsgd_event({.noise_multiplier = z, .sampling_rate = q, .steps = t}));
            for (double delta : sw.deltas) {
              CAPTURE(z);
              CAPTURE(q);
              CAPTURE(t);
              CAPTURE(delta);
              const auto parts = best.epsilon_parts(delta);
              CHECK(parts.pld_error.empty());
              for (double eps : {parts.rdp, parts.pld, parts.best()}) {
                CHECK_FALSE(std::isnan(eps));
                CHECK(eps >= 0.0);
                CHECK(eps >= set_lower_bound(z, q, delta) * (1 - 1e-9));
                // q = 1: T steps are exactly sqrt(T) / z - GDP (independent closed form)
                if (q == 1.0 && z >= 1.0) {
                  CHECK(eps >= reference::gdp_epsilon(std::sqrt(double(t)) / z, delta) - 1e-9);
                }
              }
              CHECK(parts.best() == std::min(parts.rdp, parts.pld));
            }
          }
        }
      }
    }
  }

  TEST_CASE("delta near 0: PLD cannot certify below its truncated tail mass - best reports RDP") {
    BestAccountant best;
    best.compose(dpsgd_event({.noise_multiplier = 1.0, .sampling_rate = 0.01, .steps = 100}));
    const auto p = best.epsilon_parts(1e-300);
    CHECK(std::isinf(p.pld));
    CHECK(std::isfinite(p.rdp));
    CHECK(best.epsilon(1e-300) == p.rdp);
    CHECK(p.pld_error.empty());
  }

  TEST_CASE(
      "best falls back to RDP where PLD's grid limit refuses the composition - and says why") {
    // z = 0.5, q = 0.01, T = 10^7: the composed loss grid would need far more than 2^24 points
    const DpEvent e =
        dpsgd_event({.noise_multiplier = 0.5, .sampling_rate = 0.01, .steps = 10000000});
    auto pld = make_accountant("pld");
    pld->compose(e);
    CHECK_THROWS_WITH_AS(pld->epsilon(1e-5), doctest::Contains("use the rdp accountant"),
                         dprl::ParamError);
    BestAccountant best;
    best.compose(e);
    auto rdp = make_accountant("rdp");
    rdp->compose(e);
    const auto p = best.epsilon_parts(1e-5);
    CHECK(p.best() == rdp->epsilon(1e-5));
    CHECK(std::isinf(p.pld));
    CHECK(p.pld_error.find("limit") != std::string::npos);
  }

  TEST_CASE("make_accountant and check_accountant_name share one rule") {
    CHECK(make_accountant("best")->name() == "best");
    CHECK_THROWS_WITH_AS(make_accountant("moments"),
                         "accountant = 'moments' is unknown (valid: rdp, pld, best)",
                         dprl::ParamError);
    CHECK_THROWS_WITH_AS(check_accountant_name("x", "--accountant"),
                         "--accountant = 'x' is unknown (valid: rdp, pld, best)", dprl::ParamError);
    BestAccountant best;
    CHECK_THROWS_WITH_AS(best.compose(DpEvent::poisson_sampled(0.5, DpEvent::laplace(1.0))),
                         doctest::Contains("best accountant does not support"), dprl::ParamError);
  }
}
