// DDPG and the network policy's action mapping.
#include "algos/online/ddpg.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "algos/core/nn_policy.hpp"
#include "engine/error.hpp"
#include "envs/register_envs.hpp"

TEST_SUITE("unit") {
  TEST_CASE("ddpg needs continuous actions") {
    dprl::algos::Ddpg ddpg(dprl::algos::DdpgParams{});
    dprl::algos::TrainParams t;
    t.steps = 10;
    dprl::algos::TrainContext ctx([] { return dprl::envs::make_env("cartpole"); }, 1, t, nullptr,
                                  nullptr);
    CHECK_THROWS_AS(ddpg.train(ctx), dprl::ParamError);
  }

  TEST_CASE("nn policy maps outputs to the action bounds in each mode") {
    using dprl::algos::NnPolicy;
    // a 1-1 identity network: output = input
    dprl::nn::Mlp net(dprl::nn::MlpShape({1, 1}, dprl::nn::Act::kIdentity));
    net.shape().weight(net.data(), 0)(0, 0) = 1.0f;
    const float obs[1] = {0.5f};
    double a[1];
    NnPolicy clip("x", NnPolicy::Mode::kClip, net, 1);
    clip.set_action_bounds({-0.2f}, {0.2f});
    clip.act_continuous(obs, a);
    CHECK(a[0] == doctest::Approx(0.2));
    NnPolicy squash("x", NnPolicy::Mode::kTanhScaled, net, 1);
    squash.set_action_bounds({-2.0f}, {2.0f});
    squash.act_continuous(obs, a);
    CHECK(a[0] == doctest::Approx(2.0 * std::tanh(0.5)));
    squash.set_squash_output(false);  // DDPG: the actor already ends in tanh
    squash.act_continuous(obs, a);
    CHECK(a[0] == doctest::Approx(1.0));
    squash.set_obs_norm({1.5f}, {4.0f});  // (0.5 - 1.5) / 2 = -0.5
    squash.act_continuous(obs, a);
    CHECK(a[0] == doctest::Approx(-1.0).epsilon(1e-6));
  }
}
