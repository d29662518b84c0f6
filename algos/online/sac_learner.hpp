// The soft actor-critic update (Haarnoja et al. 2018, "Soft Actor-Critic Algorithms and
// Applications"): the networks, optimisers and update steps shared by the online learner
// (algos/online/sac.hpp, CleanRL's schedule) and SAC inside a learned model (PriMORL Alg. 4,
// algos/model_based/mb_sac.hpp, the MOPO code's schedule).
//
// Tanh-squashed Gaussian actor whose log-std is bounded to [-5, 2] through tanh, twin Q critics on
// (obs, env-scale action) with Polyak target copies, clipped double-Q targets
// r + gamma (1 - d) (min Q'(s', a') - alpha log pi(a'|s')), automatic temperature towards
// target_entropy (log alpha starts at 0). MLPs with ReLU and PyTorch-default init
// (init_networks(seed, {actor, q1, q2})); reparameterisation noise from
// derive_seed(seed, Domain::kAlgo, 2). The schedule is the caller's: critic_update,
// actor_update (actor and temperature) and target_update are separate steps; update() is one of
// each (the model-based schedule, no delayed actor).
//
// | field          | default | meaning                                              |
// |----------------|---------|------------------------------------------------------|
// | hidden         | 256,256 | hidden widths (actor and critics)                    |
// | gamma          | 0.99    | discount                                             |
// | tau            | 0.005   | target smoothing                                     |
// | actor_lr       | 3e-4    | actor Adam step size                                 |
// | critic_lr      | 3e-4    | critic Adam step size                                |
// | alpha_lr       | 3e-4    | temperature Adam step size                           |
// | target_entropy | -3      | temperature target (PriMORL Table 8; sac: -dim(A))   |
// | autotune       | true    | learn the temperature                                |
// | alpha          | 0.2     | fixed temperature when autotune is off               |
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algos/core/nn_policy.hpp"
#include "algos/core/replay_buffer.hpp"
#include "engine/nn/nn_heads.hpp"
#include "engine/nn/nn_mlp.hpp"
#include "engine/nn/nn_optim.hpp"
#include "engine/policy.hpp"
#include "engine/rng.hpp"

namespace dprl {
class StateIo;
}

namespace dprl::algos {

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
  static constexpr double kLogStdMin = -5.0, kLogStdMax = 2.0;

  // Actions live in the box of `box` (env scale); networks initialised from seed (see above).
  SacLearner(int obs_dim, BoxActionMap box, SacLearnerConfig cfg, std::uint64_t seed);
  // The same for actions in [low, high].
  SacLearner(int obs_dim, int act_dim, std::vector<float> low, std::vector<float> high,
             SacLearnerConfig cfg, std::uint64_t seed);

  // Stochastic env-scale actions for the columns of obs (rollouts).
  void act(const nn::Mat& obs, nn::Mat& actions);
  // One critic step on the batch (actions in env scale): both critics towards the clipped
  // double-Q target at the current temperature.
  void critic_update(const ReplayBatch& b);
  // One actor step on the observations (reparameterised, minimising
  // mean(alpha log pi(a|s) - min Q(s, a))), then one temperature step when autotuned.
  void actor_update(const nn::Mat& obs);
  // Polyak-averages both target critics towards the critics.
  void target_update();
  // critic_update, actor_update(b.obs), target_update.
  void update(const ReplayBatch& b);
  // The deterministic policy tanh(mean) * scale + bias.
  std::unique_ptr<Policy> policy(const std::string& env_id) const;

  double alpha() const { return alpha_; }
  double last_q_loss() const { return q_loss_; }
  const nn::Mlp& actor() const { return actor_; }
  // What a run checkpoint carries (engine/state_io.hpp): networks, targets, optimiser states,
  // the temperature and the noise stream; the same call saves and restores.
  void sync_state(StateIo& io);
  const BoxActionMap& box() const { return box_; }

 private:
  void sample_actor(const Eigen::Ref<const nn::Mat>& x, nn::MlpCache& c);
  void critic_input(const nn::Mat& x, const nn::Mat& a_tanh);

  int D_, A_;
  SacLearnerConfig cfg_;
  BoxActionMap box_;
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

}  // namespace dprl::algos
