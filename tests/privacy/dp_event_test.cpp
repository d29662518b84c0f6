// DpEvent: the DP-SGD spec (named fields, validated), and accessors checked against the kind.
#include "privacy/dp_event.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "engine/error.hpp"
#include "privacy/calibration.hpp"
#include "privacy/rdp_accountant.hpp"

using namespace dprl::privacy;

TEST_SUITE("unit") {
  TEST_CASE("dpsgd_event builds the event its fields name") {
    const DpEvent e = dpsgd_event({.noise_multiplier = 1.1, .sampling_rate = 0.01, .steps = 1000});
    CHECK(e ==
          DpEvent::self_composed(DpEvent::poisson_sampled(0.01, DpEvent::gaussian(1.1)), 1000));
    CHECK(e.describe() == "poisson(q=0.01, gaussian(z=1.1)) x 1000");
    const DpEvent d = dpsgd_event(
        {.noise_multiplier = 1.1, .sampling_rate = 0.01, .steps = 1000, .discrete = true});
    CHECK(d == DpEvent::self_composed(
                   DpEvent::poisson_sampled(0.01, DpEvent::discrete_gaussian(1.1)), 1000));
    // the DP-SGD shortcuts compose the same event
    RdpAccountant acc;
    acc.compose(e);
    CHECK(rdp_dpsgd_epsilon({.noise_multiplier = 1.1, .sampling_rate = 0.01, .steps = 1000},
                            1e-5) == acc.epsilon(1e-5));
    CHECK(dpsgd_epsilon({.noise_multiplier = 1.1, .sampling_rate = 0.01, .steps = 1000}, 1e-5,
                        "rdp") == acc.epsilon(1e-5));
  }

  TEST_CASE("DpsgdSpec: each field validated by name - an omitted field is an error") {
    CHECK_THROWS_WITH_AS(dpsgd_event({.noise_multiplier = -1, .sampling_rate = 0.01, .steps = 1}),
                         "dpsgd: noise_multiplier = -1 must be finite and >= 0", dprl::ParamError);
    // z and q swapped: q = 1.1 is refused, not read as z = 0.01 at q = 1
    CHECK_THROWS_WITH_AS(dpsgd_event({.noise_multiplier = 0.01, .sampling_rate = 1.1, .steps = 1}),
                         "dpsgd: sampling_rate = 1.1 must be in (0, 1]", dprl::ParamError);
    CHECK_THROWS_WITH_AS(dpsgd_event({.noise_multiplier = 1, .sampling_rate = 0, .steps = 1}),
                         "dpsgd: sampling_rate = 0 must be in (0, 1]", dprl::ParamError);
    CHECK_THROWS_WITH_AS(dpsgd_event({.noise_multiplier = 1, .sampling_rate = 0.5, .steps = 0}),
                         "dpsgd: steps = 0 must be >= 1", dprl::ParamError);
    CHECK_THROWS_WITH_AS(dpsgd_event({.sampling_rate = 0.5, .steps = 10}),
                         "dpsgd: noise_multiplier = nan must be finite and >= 0", dprl::ParamError);
    CHECK_THROWS_WITH_AS(dpsgd_event({.noise_multiplier = 1, .steps = 10}),
                         "dpsgd: sampling_rate = nan must be in (0, 1]", dprl::ParamError);
    CHECK_THROWS_WITH_AS(dpsgd_event({.noise_multiplier = 1, .sampling_rate = 0.5}),
                         "dpsgd: steps = 0 must be >= 1", dprl::ParamError);
    CHECK_THROWS_WITH_AS(
        dpsgd_epsilon({.noise_multiplier = 1, .sampling_rate = 1.5, .steps = 1}, 1e-5),
        "dpsgd: sampling_rate = 1.5 must be in (0, 1]", dprl::ParamError);
    // z = 0 is valid: no noise, infinite epsilon
    CHECK(std::isinf(
        rdp_dpsgd_epsilon({.noise_multiplier = 0, .sampling_rate = 0.5, .steps = 1}, 1e-5)));
  }

  TEST_CASE("CalibrationSpec: each field validated by name") {
    const CalibrationSpec ok{.target_epsilon = 1, .delta = 1e-5, .sampling_rate = 0.1, .steps = 10};
    CHECK_NOTHROW(ok.validate());
    auto with = [&](auto edit) {
      CalibrationSpec s = ok;
      edit(s);
      return s;
    };
    CHECK_THROWS_WITH_AS(calibrate_noise_multiplier(with([](auto& s) { s.target_epsilon = 0; })),
                         "calibration: target_epsilon = 0 must be finite and > 0",
                         dprl::ParamError);
    CHECK_THROWS_WITH_AS(calibrate_noise_multiplier(with([](auto& s) { s.delta = 1; })),
                         "calibration: delta = 1 must be in (0, 1)", dprl::ParamError);
    CHECK_THROWS_WITH_AS(calibrate_noise_multiplier(with([](auto& s) { s.sampling_rate = 2; })),
                         "calibration: sampling_rate = 2 must be in (0, 1]", dprl::ParamError);
    CHECK_THROWS_WITH_AS(calibrate_noise_multiplier(with([](auto& s) { s.steps = 0; })),
                         "calibration: steps = 0 must be >= 1", dprl::ParamError);
    CHECK_THROWS_WITH_AS(
        calibrate_noise_multiplier({.target_epsilon = 1, .sampling_rate = 0.1, .steps = 10}),
        "calibration: delta = nan must be in (0, 1)", dprl::ParamError);
  }

  TEST_CASE("accessors answer on their kinds") {
    CHECK(DpEvent::gaussian(1.5).noise_multiplier() == 1.5);
    CHECK(DpEvent::discrete_gaussian(2.5).noise_multiplier() == 2.5);
    CHECK(DpEvent::laplace(2).laplace_scale() == 2);
    const DpEvent sampled = DpEvent::poisson_sampled(0.25, DpEvent::gaussian(1.0));
    CHECK(sampled.sampling_probability() == 0.25);
    CHECK(sampled.inner() == DpEvent::gaussian(1.0));
    const DpEvent self = DpEvent::self_composed(DpEvent::laplace(1.0), 7);
    CHECK(self.count() == 7);
    CHECK(self.inner() == DpEvent::laplace(1.0));
    const DpEvent both = DpEvent::composed({sampled, self});
    REQUIRE(both.events().size() == 2);
    CHECK(both.events()[1] == self);
    // children(): the tree, whatever the kind
    CHECK(DpEvent::gaussian(1.0).children().empty());
    CHECK(sampled.children().size() == 1);
    CHECK(both.children().size() == 2);
  }

  TEST_CASE("accessors refuse other kinds, naming both") {
    CHECK_THROWS_WITH_AS(DpEvent::laplace(2).noise_multiplier(),
                         "DpEvent::noise_multiplier() called on a laplace event (valid on "
                         "gaussian or discrete_gaussian)",
                         std::logic_error);
    CHECK_THROWS_WITH_AS(DpEvent::gaussian(2).laplace_scale(),
                         "DpEvent::laplace_scale() called on a gaussian event (valid on laplace)",
                         std::logic_error);
    const DpEvent sampled = DpEvent::poisson_sampled(0.25, DpEvent::gaussian(1.0));
    CHECK_THROWS_WITH_AS(sampled.noise_multiplier(),
                         doctest::Contains("called on a poisson_sampled event"), std::logic_error);
    CHECK_THROWS_WITH_AS(sampled.count(), doctest::Contains("count() called on a poisson_sampled"),
                         std::logic_error);
    CHECK_THROWS_WITH_AS(DpEvent::gaussian(1).sampling_probability(),
                         doctest::Contains("sampling_probability() called on a gaussian"),
                         std::logic_error);
    CHECK_THROWS_WITH_AS(DpEvent::gaussian(1).inner(),
                         "DpEvent::inner() called on a gaussian event (valid on poisson_sampled "
                         "or self_composed)",
                         std::logic_error);
    CHECK_THROWS_WITH_AS(sampled.events(), doctest::Contains("valid on composed"),
                         std::logic_error);
    CHECK_THROWS_WITH_AS(DpEvent::composed({sampled}).inner(),
                         doctest::Contains("called on a composed event"), std::logic_error);
    CHECK_THROWS_AS(DpEvent::self_composed(sampled, 2).sampling_probability(), std::logic_error);
  }
}
