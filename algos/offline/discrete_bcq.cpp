#include "algos/offline/discrete_bcq.hpp"

#include <cmath>

#include "algos/core/bcq_policy.hpp"
#include "algos/core/networks.hpp"
#include "algos/offline/bc.hpp"
#include "engine/nn/nn_optim.hpp"

namespace dprl::algos {

void DiscreteBcqParams::check() const {
  parse_hidden_sizes(common.hidden_sizes, "discrete_bcq.hidden_sizes", common.batch_size,
                     "discrete_bcq.batch_size");
  dp.check("discrete_bcq");
}

DiscreteBcq::DiscreteBcq(const Params& p) : OfflineLearner("discrete_bcq", p.common, p.dp), p_(p) {
  validate_params(p_, "discrete_bcq");
}

void DiscreteBcq::build(int obs_dim, int actions, std::uint64_t seed) {
  const std::vector<int> h = hidden();
  // trunk: [obs, h...] with ReLU after every layer (the encoder); heads: one linear layer
  auto make = [&](std::vector<int> sizes, nn::Act out, std::uint64_t index) {
    nn::Mlp net(nn::MlpShape(std::move(sizes), nn::Act::kRelu, out));
    Rng r(derive_seed(seed, Domain::kInit, index));
    nn::init_kaiming_uniform(net.shape(), net.data(), r);
    return net;
  };
  std::vector<int> trunk_sizes{obs_dim};
  trunk_sizes.insert(trunk_sizes.end(), h.begin(), h.end());
  trunk_[0] = make(trunk_sizes, nn::Act::kRelu, 0);
  qhead_ = make({h.back(), actions}, nn::Act::kIdentity, 1);
  ghead_ = make({h.back(), actions}, nn::Act::kIdentity, 2);
  trunk_[1] = p_.share_encoder ? nn::Mlp() : make(trunk_sizes, nn::Act::kRelu, 3);
  target_trunk_ = trunk_[0];
  target_qhead_ = qhead_;
}

std::vector<TrainedNet> DiscreteBcq::trained() {
  if (p_.share_encoder) return {{&trunk_[0], &c_trunk_[0]}, {&qhead_, &c_qh_}, {&ghead_, &c_gh_}};
  return {
      {&trunk_[0], &c_trunk_[0]}, {&qhead_, &c_qh_}, {&trunk_[1], &c_trunk_[1]}, {&ghead_, &c_gh_}};
}

double DiscreteBcq::compute_errors(const OfflineBatch& b, float dout_scale) {
  const int n = b.n, A = actions_, gt = g_trunk();
  const float gamma = static_cast<float>(p_.target.gamma);
  const float reward_scale = static_cast<float>(p_.target.reward_scale);
  const double log_flex = std::log(p_.action_flexibility);
  // targets: constrained argmax of the online Q and G at s', valued by the target network
  const nn::Mat& hn = trunk_[0].forward(b.next_obs, n_trunk_[0]);
  const nn::Mat& qn = qhead_.forward(hn, n_qh_);
  const nn::Mat& gn =
      ghead_.forward(gt == 0 ? hn : trunk_[1].forward(b.next_obs, n_trunk_[1]), n_gh_);
  const nn::Mat& tq = target_qhead_.forward(target_trunk_.forward(b.next_obs, t_trunk_), t_qh_);
  y_.resize(n);
  for (int i = 0; i < n; ++i) {
    const int k = bcq_select(qn.col(i).data(), gn.col(i).data(), A, log_flex);
    y_[i] = reward_scale * b.rewards[i] + gamma * b.not_done[i] * tq(k, i);
  }
  // the loss at s
  const nn::Mat& h = trunk_[0].forward(b.obs, c_trunk_[0]);
  const nn::Mat& qs = qhead_.forward(h, c_qh_);
  const nn::Mat& gs = ghead_.forward(gt == 0 ? h : trunk_[1].forward(b.obs, c_trunk_[1]), c_gh_);
  dq_.setZero(A, n);
  dg_.resize(A, n);
  double loss = 0.0;
  for (int i = 0; i < n; ++i) {
    const int a = b.actions[i];
    const float d = qs(a, i) - y_[i];
    loss += huber(d);
    dq_(a, i) = dout_scale * huber_grad(d);
    loss += imitation_errors(gs, i, a, p_.beta, dout_scale, dg_);
  }
  nn::backward_errors(qhead_.shape(), qhead_.data(), dq_, c_qh_, true);
  nn::backward_errors(ghead_.shape(), ghead_.data(), dg_, c_gh_, true);
  if (gt == 0) {
    dh_ = c_qh_.din + c_gh_.din;
    nn::backward_errors(trunk_[0].shape(), trunk_[0].data(), dh_, c_trunk_[0]);
  } else {
    nn::backward_errors(trunk_[0].shape(), trunk_[0].data(), c_qh_.din, c_trunk_[0]);
    nn::backward_errors(trunk_[1].shape(), trunk_[1].data(), c_gh_.din, c_trunk_[1]);
  }
  return n > 0 ? loss / n : 0.0;
}

void DiscreteBcq::after_step(std::int64_t step) {
  if ((step - 1) % p_.target.target_update_interval != 0) return;
  nn::polyak_update(target_trunk_.span(), trunk_[0].span(), p_.target.tau);
  nn::polyak_update(target_qhead_.span(), qhead_.span(), p_.target.tau);
}

std::unique_ptr<Policy> DiscreteBcq::policy() const {
  return std::make_unique<BcqPolicy>(env_id_, stack_trunk_head(trunk_[0], qhead_),
                                     stack_trunk_head(trunk_[g_trunk()], ghead_),
                                     p_.action_flexibility);
}

void DiscreteBcq::save_policy(const std::filesystem::path& file) const {
  BcqPolicy(env_id_, stack_trunk_head(trunk_[0], qhead_),
            stack_trunk_head(trunk_[g_trunk()], ghead_), p_.action_flexibility)
      .save(file);
}

void DiscreteBcq::released_outputs(const nn::Mat& obs, nn::Mat& out) const {
  nn::MlpCache ct, ch;
  out = ghead_.forward(trunk_[g_trunk()].forward(obs, ct), ch);
}

}  // namespace dprl::algos
