// Network policies: the acting half of a deep RL learner, and its checkpoint file.
//
// One MLP maps (optionally normalised) observations to outputs; the mode says how outputs become
// actions:
//   argmax         discrete: the highest output among allowed actions (PPO logits, DQN Q-values)
//   clip           continuous: the first action_dim outputs clipped to the action bounds
//                  (PPO's Gaussian mean, as CleanRL's ClipAction wrapper)
//   tanh_scaled    continuous: tanh(first action_dim outputs) * scale + bias (SAC's mean,
//                  DDPG's actor whose output is already tanh: then tanh is skipped, see
//                  squash_output)
// Observation normalisation (when present) is clip((obs - mean) / sqrt(var + 1e-8), -10, 10), as
// Gymnasium's NormalizeObservation. Checkpoints are engine/nn/nn_io files of kind "nn_policy" with
// meta "env=<id> mode=<mode>", net "actor", arrays obs_mean/obs_var (optional),
// scale/bias/low/high.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/nn/nn_mlp.hpp"
#include "engine/policy.hpp"

namespace dprl::algos {

class NnPolicy final : public Policy {
 public:
  enum class Mode { kArgmax, kClip, kTanhScaled };

  NnPolicy(std::string env_id, Mode mode, nn::Mlp actor, int action_dim);
  std::string name() const override { return "nn_policy"; }
  std::int64_t act_discrete(std::span<const float> obs,
                            std::span<const std::uint8_t> mask) override;
  void act_continuous(std::span<const float> obs, std::span<double> action) override;

  void set_obs_norm(std::vector<float> mean, std::vector<float> var);
  // Continuous: action bounds (clip mode) and affine scaling (tanh_scaled mode).
  void set_action_bounds(std::vector<float> low, std::vector<float> high);
  // tanh_scaled with an actor whose output is already tanh (DDPG): skip the squash.
  void set_squash_output(bool squash) { squash_ = squash; }

  void save(const std::filesystem::path& file) const;
  static std::unique_ptr<NnPolicy> load(const std::filesystem::path& file);

  const std::string& env_id() const { return env_id_; }
  Mode mode() const { return mode_; }
  int action_dim() const { return action_dim_; }
  int obs_dim() const { return actor_.shape().in(); }

 private:
  const float* outputs(std::span<const float> obs);

  std::string env_id_;
  Mode mode_;
  nn::Mlp actor_;
  int action_dim_;
  bool squash_ = true;
  std::vector<float> obs_mean_, obs_var_, low_, high_;
  std::vector<float> x_, y_, scratch_;
};

// The Box action space of a continuous-control learner (SAC, DDPG): its bounds and the affine map
// a = scale * y + bias from y in [-1, 1]. Throws ParamError naming algo unless both the
// observation and the action space are Box.
struct BoxActionMap {
  std::vector<float> low, high;
  Eigen::VectorXf scale, bias;
};
BoxActionMap box_action_map(const EnvSpec& spec, std::string_view algo);

}  // namespace dprl::algos
