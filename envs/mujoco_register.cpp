// The MuJoCo env group: half_cheetah and dmc_cartpole with their Gymnasium / DMC ids.
#include "envs/dmc_cartpole.hpp"
#include "envs/half_cheetah.hpp"
#include "envs/register_envs.hpp"

namespace dprl::envs {

void register_mujoco_envs(EnvRegistry& r) {
  r.add(make_entry<Env, HalfCheetah>(
      "half_cheetah", "planar two-legged runner rewarded for forward speed (MuJoCo 2.2)",
      "Gymnasium 1.x mujoco/half_cheetah_v5.py (HalfCheetah-v5), own MJCF from its model facts"));
  r.add(make_entry<Env, DmcCartpole>(
      "dmc_cartpole", "DeepMind Control Suite cart-pole: balance or swing up, reward in [0, 1]",
      "dm_control 1.0.x suite/cartpole.py (balance, swingup), own MJCF from its model facts"));

  r.add_alias({"HalfCheetah-v5", "half_cheetah", {}, "Gymnasium HalfCheetah-v5 (1000 steps)"});
  ParamMap balance, swingup;
  balance.push_back({"task", {"balance", "preset of cartpole-balance"}});
  swingup.push_back({"task", {"swingup", "preset of cartpole-swingup"}});
  r.add_alias({"cartpole-balance", "dmc_cartpole", balance, "DMC cartpole balance (1000 steps)"});
  r.add_alias({"cartpole-swingup", "dmc_cartpole", swingup, "DMC cartpole swingup (1000 steps)"});
}

}  // namespace dprl::envs
