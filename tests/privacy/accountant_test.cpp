// Accountants at edge inputs: tiny and huge noise, q = 1, T = 1, delta near 0 and near 1, for
// "rdp", "pld" and "best". Every accountant returns an upper bound on the true epsilon, so each
// must lie above an exact lower bound computed here independently; none may return NaN, or 0
// where the true epsilon is large.
#include "privacy/accountant.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
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

namespace {

// An accountant a program might add: it accounts nothing and says so.
class NothingAccountant final : public Accountant {
 public:
  std::string name() const override { return "nothing"; }
  bool supports(const DpEvent&) const override { return false; }
  void compose(const DpEvent& e, std::int64_t) override {
    throw dprl::ParamError("nothing accountant does not support event " + e.describe());
  }
  double epsilon(double) const override { return 0.0; }
  double delta(double) const override { return 0.0; }
  std::unique_ptr<Accountant> clone() const override {
    return std::make_unique<NothingAccountant>(*this);
  }
};

// T steps of DP-SGD composed into the named accountant.
std::unique_ptr<Accountant> composed_dpsgd(const std::string& name, double z, double q,
                                           std::int64_t t) {
  auto acc = make_accountant(name);
  acc->compose(dpsgd_event({.noise_multiplier = z, .sampling_rate = q, .steps = t}));
  return acc;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("the registry: names, choices and help in one place") {
    CHECK(accountant_registry().names() == std::vector<std::string>{"rdp", "pld", "best"});
    CHECK(accountant_names() == "rdp, pld, best");
    CHECK(accountant_names(" | ") == "rdp | pld | best");
    const auto choices = accountant_choices();
    REQUIRE(choices.names.size() == 3);
    CHECK(choices.names[1] == "pld");
    for (const auto& name : accountant_registry().names()) {
      CHECK(make_accountant(name)->name() == name);
      CHECK_NOTHROW(check_accountant_name(name));
    }
    // the accountants take no parameters: one given is refused by name
    CHECK_THROWS_WITH_AS(accountant_registry().make("pld", {{"interval", {"0.01", ""}}}),
                         doctest::Contains("pld: unknown parameter 'interval'"), dprl::ParamError);
  }

  TEST_CASE("a new accountant is one entry: made, named and checked like the built-in ones") {
    AccountantRegistry r("accountant");
    register_builtin_accountants(r);
    r.add(accountant_entry<NothingAccountant>("nothing", "accounts nothing", "this test"));
    CHECK(r.names() == std::vector<std::string>{"rdp", "pld", "best", "nothing"});
    CHECK(r.make("nothing")->name() == "nothing");
    CHECK(r.find("nothing")->summary == "accounts nothing");
    CHECK_THROWS_AS(r.add(accountant_entry<NothingAccountant>("rdp", "", "")), dprl::UnknownName);
  }
}

TEST_SUITE("unit") {
  TEST_CASE(
      "delta: the Gaussian mechanism's exact delta (Balle and Wang 2018) - PLD within its "
      "grid error, RDP above") {
    // q = 1: n Gaussians of noise z are mu-GDP with mu = sqrt(n) / z, whose exact delta is
    // Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (reference::gdp_delta). PLD's discrete
    // curve meets the exact one at every grid point of one mechanism and lies above it in
    // between; composed, the pessimistic grid error stays below 1e-6 relative here (measured
    // worst 2.4e-7 over these cases), while RDP's conversion is a looser upper bound.
    for (double z : {0.8, 1.0, 2.0, 5.0}) {
      for (std::int64_t n : {1, 10}) {
        for (double eps : {0.25, 1.0, 2.0}) {
          CAPTURE(z);
          CAPTURE(n);
          CAPTURE(eps);
          const double exact = reference::gdp_delta(std::sqrt(double(n)) / z, eps);
          if (exact < 1e-12) continue;  // relative comparisons below need a resolvable delta
          const auto pld = composed_dpsgd("pld", z, 1.0, n);
          const auto rdp = composed_dpsgd("rdp", z, 1.0, n);
          const double d_pld = pld->delta(eps), d_rdp = rdp->delta(eps);
          CHECK(d_pld >= exact * (1 - 1e-12));
          CHECK(d_pld <= exact * (1 + 1e-6));
          CHECK(d_rdp >= exact);
        }
      }
    }
    // best: the smaller of both (PLD here)
    const auto best = composed_dpsgd("best", 2.0, 1.0, 10);
    const double d_pld = composed_dpsgd("pld", 2.0, 1.0, 10)->delta(1.0);
    CHECK(best->delta(1.0) == std::min(d_pld, composed_dpsgd("rdp", 2.0, 1.0, 10)->delta(1.0)));
    CHECK(best->delta(1.0) == d_pld);
  }

  TEST_CASE("delta and epsilon are one curve: epsilon(delta(e)) = e") {
    for (const std::string name : {"rdp", "pld", "best"}) {
      const auto acc = composed_dpsgd(name, 1.0, 0.01, 1000);
      for (double e : {0.3, 1.0, 1.8282436, 4.0}) {
        CAPTURE(name);
        CAPTURE(e);
        const double d = acc->delta(e);
        REQUIRE(d > 0.0);
        REQUIRE(d < 1.0);
        CHECK(acc->epsilon(d) == doctest::Approx(e).epsilon(1e-9));
      }
    }
    // dp_accounting 0.6.0's PLD epsilon at delta 1e-5 is 1.8282436 (tests/embed): its delta there
    // is 1e-5, to the 7 printed digits times the curve's slope
    CHECK(composed_dpsgd("pld", 1.0, 0.01, 1000)->delta(1.8282436) ==
          doctest::Approx(1e-5).epsilon(1e-5));
  }

  TEST_CASE(
      "delta: edges - nothing composed, no noise, discrete noise, PLD's limits, bad epsilon") {
    for (const std::string name : {"rdp", "pld", "best"}) {
      CAPTURE(name);
      CHECK(make_accountant(name)->delta(1.0) == 0.0);
      // (almost) no noise: nothing below 1 is certified
      auto none = make_accountant(name);
      none->compose(DpEvent::gaussian(1e-3));
      CHECK(none->delta(1.0) == doctest::Approx(1.0).epsilon(1e-12));
      CHECK_THROWS_WITH_AS(make_accountant(name)->delta(-1.0),
                           "epsilon = -1 must be finite and >= 0", dprl::ParamError);
      CHECK_THROWS_AS(make_accountant(name)->delta(NAN), dprl::ParamError);
      CHECK_THROWS_AS(make_accountant(name)->delta(INFINITY), dprl::ParamError);
      // delta falls with epsilon
      const auto acc = composed_dpsgd(name, 1.1, 0.02, 500);
      CHECK(acc->delta(0.5) > acc->delta(1.0));
      CHECK(acc->delta(1.0) > acc->delta(2.0));
    }
    RdpAccountant zero;  // z = 0 (PLD refuses it): RDP certifies nothing below 1
    zero.compose(DpEvent::gaussian(0.0));
    CHECK(zero.delta(5.0) == 1.0);
    // discrete Gaussian noise: PLD has no proven curve, its delta is RDP's bound
    const DpEvent secure = dpsgd_event(
        {.noise_multiplier = 1.1, .sampling_rate = 0.02, .steps = 500, .discrete = true});
    auto pld = make_accountant("pld"), rdp = make_accountant("rdp");
    pld->compose(secure);
    rdp->compose(secure);
    CHECK(pld->delta(1.0) == rdp->delta(1.0));
    // where PLD's grid cannot hold the composition, best is RDP's delta and says why
    BestAccountant best;
    best.compose(dpsgd_event({.noise_multiplier = 0.5, .sampling_rate = 0.01, .steps = 10000000}));
    const auto p = best.delta_parts(10.0);
    CHECK(p.pld == 1.0);
    CHECK(p.pld_error.find("limit") != std::string::npos);
    CHECK(best.delta(10.0) == p.rdp);
    RdpAccountant alone;
    alone.compose(dpsgd_event({.noise_multiplier = 0.5, .sampling_rate = 0.01, .steps = 10000000}));
    CHECK(p.rdp == alone.delta(10.0));
  }
}
