#include "algos/private_noise.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "algos/actor_critic.hpp"
#include "algos/features.hpp"
#include "algos/gtd_learner.hpp"
#include "engine/error.hpp"
#include "privacy/noise_source.hpp"

using dprl::algos::add_gaussian_release;
using dprl::algos::secure_noise_scale;

TEST_SUITE("unit") {
  TEST_CASE("a secure release is a grid point: the input is snapped before exact noise") {
    auto noise = dprl::privacy::make_seeded_noise(5, 0, 0, /*secure=*/true);
    const double sd = 0.7;
    const double g = dprl::algos::release_grid(sd);
    CHECK(g <= sd / 4096);
    std::vector<double> x = {0.1234567, -3.3333333, 1e-9, 2.5 * g, 0.0};
    add_gaussian_release(x, sd, *noise);
    for (double v : x) CHECK(std::nearbyint(v / g) * g == v);
    // a non-finite input is refused, never released
    std::vector<double> bad = {1.0, NAN};
    CHECK_THROWS_AS(add_gaussian_release(bad, sd, *noise), dprl::ParamError);
  }

  TEST_CASE("the secure noise scale covers the snapped sensitivity") {
    for (double z : {0.5, 3.0, 20.0})
      for (double n : {1.0, 100.0, 3000.0}) {
        const double delta_l2 = 2.0;
        const double sd = secure_noise_scale(z, delta_l2, n, true);
        // sd >= z (Delta + sqrt(n) g(sd)): noise multiplier z against the snapped sensitivity
        CHECK(sd >= z * (delta_l2 + std::sqrt(n) * dprl::algos::release_grid(sd)));
        CHECK(sd <= z * delta_l2 / (1 - z * std::sqrt(n) / 4096));
        CHECK(secure_noise_scale(z, delta_l2, n, false) == z * delta_l2);
      }
    // a grid too coarse to cover is refused
    CHECK_THROWS_AS(secure_noise_scale(100.0, 1.0, 1e6, true), dprl::ParamError);
  }

  TEST_CASE("seeded private noise depends on the privacy parameters, os-entropy is secure") {
    auto draw = [](double eps) {
      auto n = dprl::algos::make_private_noise("seeded", 7, 1, {eps, 1e-5}, "test");
      return n->gaussian(1.0);
    };
    CHECK(draw(1.0) == draw(1.0));
    CHECK(draw(1.0) != draw(2.0));
    auto os = dprl::algos::make_private_noise("os-entropy", 7, 1, {1.0}, "test");
    CHECK(os->secure());
    CHECK_THROWS_AS(dprl::algos::make_private_noise("zero", 7, 1, {1.0}, "test"), dprl::ParamError);
  }

  TEST_CASE("actor-critic: a privatised vector from a secure source is on the noise grid") {
    dprl::algos::ActorCriticParams p;
    p.clip = "fixed";
    p.clip_norm = 1.0;
    dprl::algos::OneHotFeatures f(4, 3);
    auto noise = dprl::privacy::make_seeded_noise(3, 0, 0, /*secure=*/true);
    const double sigma = 0.53;
    dprl::algos::GtdActorCriticLearner l(p, f, 3, true, false, sigma, noise.get());
    std::vector<double> x(12, 0.0);
    x[3] = 0.3;
    x[4] = -0.7;
    l.privatise(x, {3, 4});
    const double g = dprl::algos::release_grid(sigma * 1.0);
    for (double v : x) CHECK(std::nearbyint(v / g) * g == v);
  }
}
