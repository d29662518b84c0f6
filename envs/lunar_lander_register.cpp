// Registration of the Box2D envs: lunar_lander and its Gymnasium ids (envs/lunar_lander.hpp).
#include "envs/lunar_lander.hpp"
#include "envs/register_envs.hpp"

namespace dprl::envs {

void register_box2d_envs(EnvRegistry& r) {
  r.add(make_entry<Env, LunarLander>(
      "lunar_lander", "land a rocket on the pad with main and side engines (Box2D 2.4)",
      "Gymnasium 1.3 box2d/lunar_lander.py (LunarLander-v3), on Box2D 2.4 instead of 2.3"));
  r.add_alias({"LunarLander-v3", "lunar_lander", {}, "Gymnasium LunarLander-v3 (discrete)"});
  r.add_alias({"LunarLanderContinuous-v3",
               "lunar_lander",
               {{"continuous", {"true", "preset of LunarLanderContinuous-v3"}}},
               "Gymnasium LunarLanderContinuous-v3 (2-dim Box actions)"});
}

}  // namespace dprl::envs
