#include "algos/core/policies.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "algos/core/bcq_policy.hpp"
#include "algos/core/nn_policy.hpp"
#include "algos/core/tabular_policy.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/nn/nn_io.hpp"
#include "engine/registry.hpp"
#include "envs/lunar_lander_heuristic.hpp"

namespace dprl::algos {

std::vector<BuiltinPolicy>& builtin_policies() {
  static std::vector<BuiltinPolicy> list = {
      {"random", "uniformly random actions (masked actions excluded where the env has masks)",
       [](const Env& env) { return std::make_unique<RandomPolicy>(env.spec()); }},
      {"lunar_lander_heuristic",
       "Gymnasium's LunarLander heuristic controller (discrete or continuous)",
       dprl::envs::make_lunar_lander_heuristic},
  };
  return list;
}

std::unique_ptr<Policy> make_policy(std::string_view name_or_path, const Env& env) {
  for (const auto& b : builtin_policies())
    if (b.name == name_or_path) return b.make(env);
  const std::filesystem::path file(name_or_path);
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    std::vector<std::string> names;
    for (const auto& b : builtin_policies()) names.push_back(b.name);
    throw UnknownName(fmt::format("--policy '{}' is neither a built-in policy ({}) nor a file",
                                  name_or_path, join_names(names)));
  }
  // a FIFO would block the reads below for ever, a folder fail with a library's message
  if (const std::string problem = file_problem(file); !problem.empty())
    throw DataError(fmt::format("--policy {}: {}", file.string(), problem));
  // network policies (algos/core/nn_policy.hpp): checked against the env's dimensions
  if (nn::is_nn_file(file)) {
    if (nn::load_nn_file(file).kind == "bcq_policy") {
      auto bp = BcqPolicy::load(file);
      const EnvSpec& sp = env.spec();
      if (!sp.action.is_discrete() ||
          static_cast<std::size_t>(bp->obs_dim()) != sp.observation.dim() ||
          bp->actions() != sp.action.n)
        throw DataError(fmt::format(
            "{}: bcq policy for '{}' ({} observations, {} actions) does not fit env '{}' "
            "(observation {}, action {})",
            file.string(), bp->env_id(), bp->obs_dim(), bp->actions(), sp.id,
            sp.observation.describe(), sp.action.describe()));
      return bp;
    }
    auto np = NnPolicy::load(file);
    const EnvSpec& sp = env.spec();
    const bool disc = np->mode() == NnPolicy::Mode::kArgmax;
    const std::size_t adim = disc ? static_cast<std::size_t>(sp.action.n) : sp.action.dim();
    if (static_cast<std::size_t>(np->obs_dim()) != sp.observation.dim() ||
        disc != sp.action.is_discrete() || static_cast<std::size_t>(np->action_dim()) != adim)
      throw DataError(
          fmt::format("{}: network policy for '{}' ({} observations, {} actions) does "
                      "not fit env '{}' (observation {}, action {})",
                      file.string(), np->env_id(), np->obs_dim(), np->action_dim(), sp.id,
                      sp.observation.describe(), sp.action.describe()));
    return np;
  }
  auto pol = TabularGreedyPolicy::load(file);
  const EnvSpec& spec = env.spec();
  if (!spec.observation.is_discrete() || spec.observation.n != pol.num_states() ||
      !spec.action.is_discrete() || spec.action.n != pol.num_actions())
    throw DataError(
        fmt::format("{}: policy has {} states x {} actions but env '{}' has observation "
                    "{} and action {}",
                    file.string(), pol.num_states(), pol.num_actions(), spec.id,
                    spec.observation.describe(), spec.action.describe()));
  return std::make_unique<TabularGreedyPolicy>(std::move(pol));
}

}  // namespace dprl::algos
