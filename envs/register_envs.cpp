#include "envs/register_envs.hpp"

namespace dprl::envs {

void register_builtin_envs(EnvRegistry& r) {
  (void)r;
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

}  // namespace dprl::envs
