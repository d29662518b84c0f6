#include "algos/core/private_noise.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "algos/actor_critic/actor_critic.hpp"
#include "algos/actor_critic/features.hpp"
#include "algos/actor_critic/gtd_learner.hpp"
#include "engine/error.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/secure_release.hpp"

TEST_SUITE("unit") {
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

  TEST_CASE("actor-critic: a privatised vector from a secure source is on the planned grid") {
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
    // C = 1: noise sd sigma against L2 sensitivity 2C over the 12 elements
    const double g = dprl::privacy::gaussian_release_plan(sigma * 1.0, 2.0, 12, true).grid;
    bool odd = false;  // some value is an odd multiple of g: the grid is g, not a coarser one
    for (double v : x) {
      CHECK(std::fmod(v, g) == 0.0);
      odd = odd || std::fmod(v, 2 * g) != 0.0;
    }
    CHECK(odd);
  }
}
