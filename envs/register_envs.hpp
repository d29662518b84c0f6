// The environment registry: every built-in env and Gymnasium alias, from one explicit list.
//
// User programs add their own envs with env_registry().add(make_entry<Env, MyEnv>(...)).
#pragma once

#include <memory>
#include <string_view>

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

}  // namespace dprl::envs
