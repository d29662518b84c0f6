#include "algos/offline/discrete_cql.hpp"

#include <cmath>

#include "algos/core/networks.hpp"
#include "algos/core/nn_policy.hpp"
#include "engine/nn/nn_optim.hpp"

namespace dprl::algos {

void DiscreteCqlParams::check() const {
  parse_hidden_sizes(common.hidden_sizes, "discrete_cql.hidden_sizes", common.batch_size,
                     "discrete_cql.batch_size");
  dp.check("discrete_cql");
}

DiscreteCql::DiscreteCql(const Params& p) : OfflineLearner("discrete_cql", p.common, p.dp), p_(p) {
  validate_params(p_, "discrete_cql");
}

void DiscreteCql::build(int obs_dim, int actions, std::uint64_t seed) {
  obs_dim_ = obs_dim;
  actions_ = actions;
  q_ = make_relu_mlp(obs_dim, hidden(), actions, seed, 0);
  target_ = q_;
}

double DiscreteCql::compute_errors(const OfflineBatch& b, float dout_scale) {
  const int n = b.n, A = actions_;
  const float gamma = static_cast<float>(p_.target.gamma), alpha = static_cast<float>(p_.alpha);
  const float reward_scale = static_cast<float>(p_.target.reward_scale);
  // double-DQN targets: online argmax at s', target network value (no gradient)
  const nn::Mat& qn = q_.forward(b.next_obs, cn_);
  const nn::Mat& tq = target_.forward(b.next_obs, ct_);
  y_.resize(n);
  for (int i = 0; i < n; ++i) {
    int k;
    qn.col(i).maxCoeff(&k);
    y_[i] = reward_scale * b.rewards[i] + gamma * b.not_done[i] * tq(k, i);
  }
  const nn::Mat& qs = q_.forward(b.obs, cq_);
  dout_.resize(A, n);
  double loss = 0.0;
  for (int i = 0; i < n; ++i) {
    const int a = b.actions[i];
    const float mx = qs.col(i).maxCoeff();
    float sum = 0.0f;
    for (int j = 0; j < A; ++j) {
      const float e = std::exp(qs(j, i) - mx);
      dout_(j, i) = e;
      sum += e;
    }
    const float lse = mx + std::log(sum);
    const float d = qs(a, i) - y_[i];
    loss += huber(d) + alpha * (lse - qs(a, i));
    // d/dq [Huber(q_a - y) + alpha (logsumexp q - q_a)] = huber'(d) e_a + alpha (softmax - e_a)
    const float inv = alpha / sum;
    for (int j = 0; j < A; ++j) dout_(j, i) *= inv;
    dout_(a, i) += huber_grad(d) - alpha;
  }
  dout_ *= dout_scale;
  nn::backward_errors(q_.shape(), q_.data(), dout_, cq_);
  return n > 0 ? loss / n : 0.0;
}

void DiscreteCql::after_step(std::int64_t step) {
  if ((step - 1) % p_.target.target_update_interval == 0)
    nn::polyak_update(target_.span(), q_.span(), p_.target.tau);
}

std::unique_ptr<Policy> DiscreteCql::policy() const {
  return std::make_unique<NnPolicy>(env_id_, NnPolicy::Mode::kArgmax, q_, actions_);
}

void DiscreteCql::save_policy(const std::filesystem::path& file) const {
  NnPolicy(env_id_, NnPolicy::Mode::kArgmax, q_, actions_).save(file);
}

void DiscreteCql::released_outputs(const nn::Mat& obs, nn::Mat& out) const {
  nn::MlpCache c;
  out = q_.forward(obs, c);
}

}  // namespace dprl::algos
