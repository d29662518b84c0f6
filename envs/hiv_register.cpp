// Registration of the HIV treatment env and its aliases (envs/hiv.hpp).
#include "envs/hiv.hpp"
#include "envs/register_envs.hpp"

namespace dprl::envs {

void register_hiv_envs(EnvRegistry& r) {
  r.add(make_entry<Env, Hiv>(
      "hiv", "HIV drug scheduling on the Adams et al. (2004) ODE model; 4 drug combinations",
      "rlpy HIVTreatment (Ernst et al. 2006) with paper 000 appendix B.1 settings "
      "(20 days x 50 steps); Dormand-Prince 5(4), within 1e-4 of SciPy odeint"));
  ParamMap rlpy;
  for (auto [k, v] : {std::pair{"days_per_step", "5"}, std::pair{"max_episode_steps", "200"}})
    rlpy.push_back({k, {v, "preset of hiv-rlpy"}});
  r.add_alias({"hiv-rlpy", "hiv", rlpy, "rlpy's HIVTreatment setting (5 days x 200 steps)"});
  r.add_alias(
      {"HIVTreatment", "hiv", {}, "the paper's HIV Treatment setting (20 days x 50 steps)"});
}

}  // namespace dprl::envs
