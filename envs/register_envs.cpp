#include "envs/register_envs.hpp"

#include <fmt/format.h>

#include "envs/acrobot.hpp"
#include "envs/cartpole.hpp"
#include "envs/chain_mdp.hpp"
#include "envs/linear_mdp.hpp"
#include "envs/pendulum.hpp"
#include "envs/taxi.hpp"

namespace dprl::envs {
namespace {

ParamMap preset(std::initializer_list<std::pair<const char*, const char*>> kv, const char* alias) {
  ParamMap m;
  for (auto& [k, v] : kv) m.push_back({k, {v, std::string("preset of ") + alias}});
  return m;
}

}  // namespace

void register_builtin_envs(EnvRegistry& r) {
  r.add(make_entry<Env, CartPole>(
      "cartpole", "pole balanced on a cart pushed left or right",
      "Gymnasium 1.3 classic_control/cartpole.py (CartPole-v1), bit-identical float64"));
  r.add(make_entry<Env, Taxi>(
      "taxi", "5x5 grid taxi: pick up and drop off a passenger; action masks, tabular model",
      "Gymnasium 1.2.3 toy_text/taxi.py (Taxi-v3)"));
  r.add(make_entry<Env, ChainMdp>(
      "chain_mdp", "chain of n states, stay or move right (succeeds with probability p)",
      "MDP-100 of paper 001 (Electronics 2020, 9, 1486) section 4.1.1"));
  r.add(make_entry<Env, LinearMdp>(
      "linear_mdp", "finite-horizon linear MDP with known features and exact model (4 instances)",
      "paper 002; Jin et al. 2020; Min et al. 2021 / Qiao and Wang 2023 synthetic instance"));
  r.add(make_entry<Env, Pendulum>(
      "pendulum", "torque-limited pendulum swing-up, continuous action",
      "Gymnasium 1.3 classic_control/pendulum.py (Pendulum-v1), bit-identical float64"));
  r.add(make_entry<Env, Acrobot>(
      "acrobot", "two-link pendulum actuated at the joint; swing the tip up",
      "Gymnasium 1.3 classic_control/acrobot.py (Acrobot-v1), bit-identical float64"));

  // Gymnasium ids
  r.add_alias({"CartPole-v1", "cartpole", {}, "Gymnasium CartPole-v1 (500 steps)"});
  r.add_alias({"CartPole-v0", "cartpole", preset({{"max_episode_steps", "200"}}, "CartPole-v0"),
               "Gymnasium CartPole-v0 (200 steps)"});
  r.add_alias({"Taxi-v3", "taxi", {}, "Gymnasium Taxi-v3 (200 steps)"});
  r.add_alias({"Pendulum-v1", "pendulum", {}, "Gymnasium Pendulum-v1 (200 steps)"});
  r.add_alias({"Acrobot-v1", "acrobot", {}, "Gymnasium Acrobot-v1 (500 steps)"});
  r.add_alias({"MDP-100", "chain_mdp", {}, "the MDP-100 chain of paper 001 (n 100, p 0.9)"});

  // physics and simulation envs, each group registering its own entries and aliases
  register_box2d_envs(r);
  register_hiv_envs(r);
  register_mujoco_envs(r);
}

EnvRegistry& env_registry() {
  static EnvRegistry* r = [] {
    auto* reg = new EnvRegistry("env");
    register_builtin_envs(*reg);
    return reg;
  }();
  return *r;
}

std::unique_ptr<Env> make_env(std::string_view name, const ParamMap& params) {
  return env_registry().make(name, params);
}

void check_env_type(const EnvRegistry::Entry& entry, std::type_index type, std::string_view id) {
  if (entry.type == type) return;
  std::string asked = "an unregistered class";
  for (const auto& e : env_registry().entries())
    if (e.type == type) asked = "the class of '" + e.name + "'";
  throw ParamError(fmt::format("make_env: '{}' is the env '{}', not {}", id, entry.name, asked));
}

}  // namespace dprl::envs
