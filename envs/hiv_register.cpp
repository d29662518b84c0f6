// Registration hook for this env group; the group's helper fills it in.
#include "envs/register_envs.hpp"

namespace dprl::envs {

void register_hiv_envs(EnvRegistry&) {}

}  // namespace dprl::envs
