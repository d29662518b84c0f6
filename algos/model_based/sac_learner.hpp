// A soft actor-critic learner driven by batches, for training inside a model (PriMORL Alg. 4,
// after Spinning Up's SAC; Haarnoja et al. 2018, "Soft Actor-Critic Algorithms and Applications").
//
// Same networks and maths as algos/sac.hpp (tanh-squashed Gaussian actor with log-std bounded to
// [-5, 2], twin Q critics with Polyak targets, clipped double-Q targets, automatic temperature),
// but every update() is one critic step, one actor step and one temperature step on the given
// batch (no delayed actor), and the target entropy and the three learning rates are parameters:
// PriMORL Table 8 uses target entropy -3 and learning rate 3e-4 (the MOPO code's defaults).
//
// | field          | default | meaning                                         |
// |----------------|---------|-------------------------------------------------|
// | hidden         | 256,256 | hidden widths (actor and critics; MOPO code)    |
// | gamma          | 0.99    | discount                                        |
// | tau            | 0.005   | target smoothing                                |
// | actor_lr       | 3e-4    | actor Adam step size (Table 8)                  |
// | critic_lr      | 3e-4    | critic Adam step size (Table 8)                 |
// | alpha_lr       | 3e-4    | temperature Adam step size (MOPO code)          |
// | target_entropy | -3      | temperature target (Table 8)                    |
// | autotune       | true    | learn the temperature (log alpha starts at 0)   |
// | alpha          | 0.2     | fixed temperature when autotune is off          |
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algos/replay_buffer.hpp"
#include "engine/nn_heads.hpp"
#include "engine/nn_mlp.hpp"
#include "engine/nn_optim.hpp"
#include "engine/policy.hpp"
#include "engine/rng.hpp"

namespace dprl::algos::model_based {

struct SacLearnerConfig {
  std::vector<int> hidden{256, 256};
  double gamma = 0.99;
  double tau = 0.005;
  double actor_lr = 3e-4;
  double critic_lr = 3e-4;
  double alpha_lr = 3e-4;
  double target_entropy = -3.0;
  bool autotune = true;
  double alpha = 0.2;
};

class SacLearner {
 public:
  // Actions live in [low, high] (env scale); networks initialised from derive_seed(seed, kInit).
  SacLearner(int obs_dim, int act_dim, std::vector<float> low, std::vector<float> high,
             SacLearnerConfig cfg, std::uint64_t seed);

  // Stochastic env-scale actions for the columns of obs (rollouts).
  void act(const nn::Mat& obs, nn::Mat& actions);
  // One SAC update on the batch (actions in env scale).
  void update(const ReplayBatch& b);
  // The deterministic policy tanh(mean) * scale + bias.
  std::unique_ptr<Policy> policy(const std::string& env_id) const;

  double alpha() const { return alpha_; }
  double last_q_loss() const { return q_loss_; }
  const nn::Mlp& actor() const { return actor_; }

 private:
  void sample_actor(const Eigen::Ref<const nn::Mat>& x, nn::MlpCache& c);
  void critic_input(const nn::Mat& x, const nn::Mat& a_tanh);

  int D_, A_;
  SacLearnerConfig cfg_;
  std::vector<float> low_, high_;
  Eigen::VectorXf scale_, bias_;
  double log_scale_sum_ = 0;
  nn::Mlp actor_, q1_, q2_, q1t_, q2t_;
  nn::Adam opt_a_, opt_q1_, opt_q2_, opt_alpha_;
  float log_alpha_ = 0.0f;
  double alpha_;
  double q_loss_ = 0;
  Rng nrng_;  // reparameterisation and acting noise
  nn::Buffer g_a_, g_q1_, g_q2_;
  nn::MlpCache ca_, c1_, c2_, ct1_, ct2_;
  nn::Mat out1_, ls_, lsf_, xin_, dmean_, dls_, dla_, dq_, dact_;
  nn::TanhSample ts_;
  std::vector<float> y_, w_;
};

}  // namespace dprl::algos::model_based
