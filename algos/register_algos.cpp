#include "algos/actor_critic.hpp"
#include "algos/algorithm.hpp"
#include "algos/q_learning.hpp"

namespace dprl::algos {

void register_builtin_algos(AlgoRegistry& r) {
  r.add(make_entry<Algorithm, QLearning>(
      "q_learning", "tabular Q-learning with epsilon-greedy exploration",
      "Watkins and Dayan 1992; Sutton and Barto 2018 sec. 6.5"));
  r.add(make_entry<Algorithm, ActorCritic>(
      "actor_critic",
      "off-policy actor-critic with GTD(lambda) critic and traces; DP-Actor/Critic/Both",
      "paper 001 (Seo and Yang 2020) Algorithms 1-4; Degris et al. 2012"));
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
