// Policies by name: built-in ones ("random", and env-specific heuristics added by their envs'
// issues) or a checkpoint file written by a learner.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/env.hpp"
#include "engine/policy.hpp"

namespace dprl::algos {

struct BuiltinPolicy {
  std::string name;
  std::string summary;
  std::function<std::unique_ptr<Policy>(const Env&)> make;  // throws ParamError if env unsuitable
};

// The built-in policies (filled on first use); user programs may add to it.
std::vector<BuiltinPolicy>& builtin_policies();

// A built-in policy by name, else a checkpoint file at that path; else UnknownName listing the
// built-ins. The policy is checked against env (state count, action count).
std::unique_ptr<Policy> make_policy(std::string_view name_or_path, const Env& env);

}  // namespace dprl::algos
