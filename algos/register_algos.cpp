#include "algos/algorithm.hpp"
#include "algos/q_learning.hpp"

namespace dprl::algos {

void register_builtin_algos(AlgoRegistry& r) {
  r.add(make_entry<Algorithm, QLearning>(
      "q_learning", "tabular Q-learning with epsilon-greedy exploration",
      "Watkins and Dayan 1992; Sutton and Barto 2018 sec. 6.5"));
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
