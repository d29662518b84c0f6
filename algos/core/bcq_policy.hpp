// The acting half of discrete BCQ and its checkpoint file.
//
// Discrete BCQ (Fujimoto, Conti, Ghavamzadeh and Pineau, "Benchmarking Batch Deep Reinforcement
// Learning Algorithms", NeurIPS 2019 Deep RL workshop) acts greedily in Q among the actions the
// behaviour classifier G finds plausible, as d3rlpy 2.8.1's
// DiscreteBCQImpl.inner_predict_best_action:
//   allowed(a) = log G(a|s) - max_a' log G(a'|s) > log(threshold)
//   action     = argmax_a (Q(s, a) - min_a' Q(s, a') + 1e-5) * allowed(a)
// (the shift keeps every allowed value positive, so a masked action never wins; ties go to the
// lowest index). The same rule picks the next action of BCQ's double-DQN target.
// Files: engine/nn/nn_io of kind "bcq_policy", meta "env=<id> threshold=<t>", nets "q" and "g"
// (full MLPs; with a shared encoder both copy it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/nn/nn_mlp.hpp"
#include "engine/policy.hpp"

namespace dprl::algos {

// The constrained greedy action from Q-values and classifier logits of one state (A each);
// env_mask (empty or A entries, 0 = not allowed) removes actions as well.
int bcq_select(const float* q, const float* logits, int actions, double log_threshold,
               std::span<const std::uint8_t> env_mask = {});

class BcqPolicy final : public Policy {
 public:
  BcqPolicy(std::string env_id, nn::Mlp q, nn::Mlp g, double threshold);
  std::string name() const override { return "bcq_policy"; }
  std::int64_t act_discrete(std::span<const float> obs,
                            std::span<const std::uint8_t> mask) override;

  void save(const std::filesystem::path& file) const;
  static std::unique_ptr<BcqPolicy> load(const std::filesystem::path& file);

  const std::string& env_id() const { return env_id_; }
  int obs_dim() const { return q_.shape().in(); }
  int actions() const { return q_.shape().out(); }
  double threshold() const { return threshold_; }

 private:
  std::string env_id_;
  nn::Mlp q_, g_;
  double threshold_;
  std::vector<float> qv_, gv_, scratch_;
};

// The MLP trunk then head as one network: trunk [in, h...] with ReLU after every layer, head one
// linear layer [h_last, out].
nn::Mlp stack_trunk_head(const nn::Mlp& trunk, const nn::Mlp& head);

}  // namespace dprl::algos
