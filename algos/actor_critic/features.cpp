#include "algos/actor_critic/features.hpp"

#include <fmt/format.h>

#include "engine/error.hpp"

namespace dprl::algos {

void OneHotFeatures::state(std::span<const float> obs, SparseFeatures& out) const {
  const int s = static_cast<int>(obs[0]);
  DPRL_DCHECK(s >= 0 && s < s_);
  out.entries.assign(1, {s, 1.0});
}

void OneHotFeatures::state_action(std::span<const float> obs, int action,
                                  SparseFeatures& out) const {
  const int s = static_cast<int>(obs[0]);
  DPRL_DCHECK(s >= 0 && s < s_ && action >= 0 && action < a_);
  out.entries.assign(1, {s * a_ + action, 1.0});
}

std::unique_ptr<FeatureMap> make_feature_map(const std::string& name, const Space& observation,
                                             const Space& action) {
  if (name == "one_hot") {
    if (!observation.is_discrete() || !action.is_discrete())
      throw ParamError(
          fmt::format("features = one_hot needs discrete observations and actions; "
                      "got observation {} and action {}",
                      observation.describe(), action.describe()));
    return std::make_unique<OneHotFeatures>(static_cast<int>(observation.n),
                                            static_cast<int>(action.n));
  }
  throw UnknownName(fmt::format("unknown feature map '{}'; valid: one_hot", name));
}

}  // namespace dprl::algos
