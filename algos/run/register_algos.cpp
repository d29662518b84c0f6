#include "algos/actor_critic/actor_critic.hpp"
#include "algos/core/algorithm.hpp"
#include "algos/expert_level/ppo_layers.hpp"
#include "algos/kickstart/kickstart_ppo.hpp"
#include "algos/lsvi/lsvi_ucb.hpp"
#include "algos/model_based/primorl.hpp"
#include "algos/offline/bc.hpp"
#include "algos/offline/discrete_bcq.hpp"
#include "algos/offline/discrete_cql.hpp"
#include "algos/online/ddpg.hpp"
#include "algos/online/dqn.hpp"
#include "algos/online/ppo.hpp"
#include "algos/online/q_learning.hpp"
#include "algos/online/sac.hpp"

namespace dprl::algos {

void register_builtin_algos(AlgoRegistry& r) {
  r.add(make_entry<Algorithm, QLearning>("q_learning",
                                         "tabular Q-learning with epsilon-greedy exploration",
                                         "Watkins and Dayan 1992; Sutton and Barto 2018 sec. 6.5"));
  // deep RL learners (engine/nn/nn_*)
  r.add(make_entry<Algorithm, Ppo>("ppo", "PPO with GAE, CleanRL ppo.py defaults",
                                   "Schulman et al. 2017; Huang et al. 2022"));
  r.add(make_entry<Algorithm, Dqn>("dqn", "DQN with double-Q, replay and a target network",
                                   "Mnih et al. 2015; van Hasselt et al. 2016"));
  r.add(make_entry<Algorithm, Sac>("sac", "soft actor-critic with twin Q and auto temperature",
                                   "Haarnoja et al. 2018"));
  r.add(make_entry<Algorithm, Ddpg>("ddpg", "deep deterministic policy gradient",
                                    "Lillicrap et al. 2016"));
  r.add(make_entry<Algorithm, PpoContinuous>(
      "ppo_continuous", "PPO with GAE, CleanRL ppo_continuous_action.py defaults",
      "Schulman et al. 2017; Huang et al. 2022"));
  r.add(make_entry<Algorithm, PpoLayers>(
      "ppo_layers", "PPO (CleanRL ppo.py defaults) with a width per hidden layer",
      "Schulman et al. 2017; paper 000 App. B.1 (512, 256, 64) experts"));
  r.add(make_entry<Algorithm, PpoKickstart>(
      "ppo_kickstart",
      "PPO kickstarted by a teacher answering through the Dirichlet mechanism; privacy-aware "
      "threshold",
      "paper 003 (Gohari et al.) secs. 3-5; Schmitt et al. 2018"));
  r.add_alias(
      {"ppo_kickstart_spinup", "ppo_kickstart", kickstart_spinning_up_preset(),
       "ppo_kickstart with Spinning Up's ppo() defaults and 1000 steps per epoch (paper 003)"});
  r.add(make_entry<Algorithm, ActorCritic>(
      "actor_critic",
      "off-policy actor-critic with GTD(lambda) critic and traces; DP-Actor/Critic/Both",
      "paper 001 (Seo and Yang 2020) Algorithms 1-4; Degris et al. 2012"));
  r.add(make_entry<Algorithm, LsviUcb>(
      "lsvi_ucb",
      "LSVI-UCB / LSVI-UCB+ in linear MDPs; joint-DP releases with static or adaptive batching",
      "paper 002; Jin et al. 2020; Hu et al. 2022; He et al. 2023; Luyo et al. 2021; Ngo et al. "
      "2022"));
  // offline learners (algos/offline/): learn from the experiment's dataset; user-level DP-SGD
  r.add(make_entry<Algorithm, Bc>("bc",
                                  "discrete behaviour cloning from a dataset (d3rlpy defaults)",
                                  "d3rlpy 2.8.1 DiscreteBC"));
  r.add(make_entry<Algorithm, DiscreteCql>(
      "discrete_cql", "discrete conservative Q-learning from a dataset (d3rlpy defaults)",
      "Kumar et al. 2020; d3rlpy 2.8.1 DiscreteCQL"));
  r.add(make_entry<Algorithm, DiscreteBcq>(
      "discrete_bcq", "discrete batch-constrained Q-learning from a dataset (d3rlpy defaults)",
      "Fujimoto et al. 2019; d3rlpy 2.8.1 DiscreteBCQ"));
  r.add(make_entry<Algorithm, Primorl>(
      "primorl",
      "trajectory-level DP model-based offline RL: DDPG data, DP-FedAvg ensemble, SAC in the "
      "penalised model (variant mopo: the non-private MOPO baseline)",
      "paper 004 (PriMORL) Algorithms 1-4; Yu et al. 2020 (MOPO)"));
}

AlgoRegistry& algo_registry() {
  static AlgoRegistry* r = [] {
    auto* reg = new AlgoRegistry("algorithm");
    register_builtin_algos(*reg);
    return reg;
  }();
  return *r;
}

}  // namespace dprl::algos
