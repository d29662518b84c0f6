// The teacher of kickstarting (paper 003, "Privacy-Preserving Kickstarting Deep Reinforcement
// Learning with Privacy-Aware Learners", Gohari et al., sec. 2.2 and 5): a frozen discrete policy
// read from a policy file of a PPO learner (algos/core/nn_policy.hpp, mode argmax: the actor's
// outputs are logits), queried with raw observations, answering softmax(actor(normalise(obs))).
//
// Certified Lipschitz bound of raw observation -> softmax policy, in L2 (for eq. 12):
//   L = obs_scale * Lip(actor) * 1/2
//   obs_scale   max_i 1 / sqrt(var_i + 1e-8) when the file has observation normalisation
//               (clip((x - mean) / sqrt(var + 1e-8), -10, 10): the clip is 1-Lipschitz), else 1;
//   Lip(actor)  the product of per-layer spectral-norm upper bounds and activation constants
//               (engine/nn/nn_lipschitz.hpp);
//   1/2         softmax: its Jacobian diag(p) - p p^T has, for a unit v, v^T J v = Var_p(v) <=
//               (max v - min v)^2 / 4 <= 1/2 (Popoviciu), so its spectral norm is <= 1/2.
// The eta floor's factor (1 - m eta) is applied by the mechanism (privacy/dirichlet_teacher.hpp).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "algos/core/algorithm.hpp"
#include "engine/nn/nn_lipschitz.hpp"
#include "engine/nn/nn_mlp.hpp"

namespace dprl::algos {

class TeacherPolicy {
 public:
  struct Lipschitz {
    nn::MlpLipschitz actor;
    double obs_scale = 1;
    double softmax = 0.5;
    double upper = 0;     // certified: obs_scale * actor.upper * softmax
    double estimate = 0;  // the same with power-iteration estimates (not certified)
  };

  // Loads a discrete policy file; DataError / ParamError name key and the file.
  static TeacherPolicy load(const std::filesystem::path& file, std::string_view key);

  int obs_dim() const { return actor_.shape().in(); }
  int actions() const { return actions_; }
  const nn::MlpShape& shape() const { return actor_.shape(); }
  const Lipschitz& lipschitz() const { return lip_; }
  // ParamError naming key unless the env has a Box observation of obs_dim() values and
  // actions() discrete actions.
  void check_spaces(const EnvSpec& spec, std::string_view key) const;
  // probs (actions x n) = softmax of the logits of n raw observations (obs_dim x n floats,
  // column per observation). Reuses its buffers: no allocation once sizes are seen.
  void probabilities(std::span<const float> obs, int n, Eigen::MatrixXd& probs);

 private:
  nn::Mlp actor_;
  int actions_ = 0;
  std::vector<float> mean_, var_;
  Lipschitz lip_;
  nn::MlpCache cache_;
  nn::Mat x_;
};

// Trains a teacher with the "ppo" learner (CleanRL defaults, two tanh hidden layers of
// hidden_size units) for steps env steps on ctx's env, from a seed derived from ctx.seed(), and
// writes its policy file (parent directories created).
void train_teacher(const std::filesystem::path& file, TrainContext& ctx, int hidden_size,
                   std::int64_t steps);

}  // namespace dprl::algos
