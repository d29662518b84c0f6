// "ppo_layers": PPO (algos/online/ppo.hpp, CleanRL ppo.py defaults) whose actor and critic have a
// width per hidden layer, e.g. the (512, 256, 64) experts of Sharma et al., "Preserving
// Expert-Level Privacy in Offline Reinforcement Learning" (TMLR), App. B.1, or CleanRL's (64, 64).
//
// | param        | default | meaning                                                        |
// |--------------|---------|----------------------------------------------------------------|
// | hidden_sizes | 64,64   | comma-separated hidden widths of the actor and of the critic   |
// plus every "ppo" parameter; hidden_size and hidden_layers are unused (hidden_sizes wins).
#pragma once

#include <string>

#include "algos/online/ppo.hpp"

namespace dprl::algos {

struct PpoLayersParams : PpoParams {
  std::string hidden_sizes = "64,64";

  template <class V>
  void visit(V& v) {
    PpoParams::visit(v);
    v("hidden_sizes", hidden_sizes, Choices{},
      "comma-separated hidden widths (overrides hidden_size and hidden_layers)");
  }
  void check() const;
};

class PpoLayers final : public Ppo {
 public:
  using Params = PpoLayersParams;
  explicit PpoLayers(const PpoLayersParams& p);
  ParamMap params() const override { return dump_params(lp_); }

 private:
  PpoLayersParams lp_;
};

}  // namespace dprl::algos
