// The environment registry: every built-in env and Gymnasium alias, from one explicit list.
//
// User programs add their own envs with env_registry().add(make_entry<Env, MyEnv>(...)).
//
// Two ways to make an env by id or alias: make_env(id, ParamMap) gives an Env from parameter
// texts (what YAML and the CLI use); make_env<E>(id, E::Params) gives the concrete class E from
// typed parameters, e.g. make_env<CartPole>("CartPole-v0", {.gravity = 9.81}). The typed form
// applies the alias's preset, then the fields of p: a field of p left at its default takes the
// preset's value (the example keeps CartPole-v0's 200 steps), any other field wins. The concrete
// type lets loops call step() without virtual dispatch (engine/vec_env.hpp).
#pragma once

#include <memory>
#include <string_view>
#include <typeindex>

#include "engine/env.hpp"
#include "engine/registry.hpp"

namespace dprl::envs {

using EnvRegistry = Registry<Env>;

// The process-wide registry, filled with the built-in envs on first use.
EnvRegistry& env_registry();
// Adds the built-in envs and aliases to r (what env_registry() does once).
void register_builtin_envs(EnvRegistry& r);
// The groups register_builtin_envs calls (one file each: envs/lunar_lander.cpp,
// envs/hiv.cpp, envs/mujoco_envs.cpp).
void register_box2d_envs(EnvRegistry& r);
void register_hiv_envs(EnvRegistry& r);
void register_mujoco_envs(EnvRegistry& r);
// env_registry().make(name, params).
std::unique_ptr<Env> make_env(std::string_view name, const ParamMap& params = {});

// Throws ParamError unless the entry was registered for the class `type` (asked for as id).
void check_env_type(const EnvRegistry::Entry& entry, std::type_index type, std::string_view id);

// The env id or alias names, as class E, with typed parameters (see above). Throws UnknownName
// for an unknown id, ParamError for an id of another class or invalid parameters.
template <class E>
std::unique_ptr<E> make_env(std::string_view id, const typename E::Params& p = {}) {
  using Params = typename E::Params;
  const auto [entry, preset] = env_registry().resolve(id, {});
  check_env_type(*entry, typeid(E), id);
  const ParamMap given = dump_params(p), defaults = dump_params(Params{});
  ParamMap kept;  // the preset's values for the fields p leaves at their defaults
  for (const auto& [key, value] : preset)
    for (std::size_t i = 0; i < given.size(); ++i)
      if (given[i].first == key && given[i].second.text == defaults[i].second.text)
        kept.push_back({key, value});
  return std::make_unique<E>(read_params<Params>(kept, entry->name, p));
}

}  // namespace dprl::envs
