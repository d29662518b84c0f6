#include "algos/expert_level/ppo_layers.hpp"

#include "algos/core/networks.hpp"

namespace dprl::algos {

void PpoLayersParams::check() const {
  PpoParams::check();
  parse_hidden_sizes(hidden_sizes, "ppo_layers.hidden_sizes");
}

PpoLayers::PpoLayers(const PpoLayersParams& p) : Ppo(p), lp_(p) {
  validate_params(lp_, "ppo_layers");
  set_hidden_widths(parse_hidden_sizes(lp_.hidden_sizes, "ppo_layers.hidden_sizes"));
}

}  // namespace dprl::algos
