#include "algos/online/sac_learner.hpp"

#include <algorithm>
#include <cmath>

#include "algos/core/networks.hpp"
#include "engine/error.hpp"
#include "engine/state_io.hpp"

namespace dprl::algos {

using nn::Mat;

namespace {
BoxActionMap box_of(std::vector<float> low, std::vector<float> high) {
  DPRL_CHECK(low.size() == high.size());
  BoxActionMap m;
  m.low = std::move(low);
  m.high = std::move(high);
  const auto a = static_cast<Eigen::Index>(m.low.size());
  m.scale.resize(a);
  m.bias.resize(a);
  for (Eigen::Index j = 0; j < a; ++j) {
    m.scale[j] = 0.5f * (m.high[j] - m.low[j]);
    m.bias[j] = 0.5f * (m.high[j] + m.low[j]);
  }
  return m;
}
}  // namespace

SacLearner::SacLearner(int obs_dim, int act_dim, std::vector<float> low, std::vector<float> high,
                       SacLearnerConfig cfg, std::uint64_t seed)
    : SacLearner(obs_dim, box_of(std::move(low), std::move(high)), std::move(cfg), seed) {
  DPRL_CHECK(A_ == act_dim);
}

SacLearner::SacLearner(int obs_dim, BoxActionMap box, SacLearnerConfig cfg, std::uint64_t seed)
    : D_(obs_dim),
      A_(static_cast<int>(box.low.size())),
      cfg_(std::move(cfg)),
      box_(std::move(box)),
      alpha_(cfg_.autotune ? 1.0 : cfg_.alpha),
      nrng_(derive_seed(seed, Domain::kAlgo, 2)) {
  DPRL_CHECK(static_cast<int>(box_.high.size()) == A_ && box_.scale.size() == A_ &&
             box_.bias.size() == A_);
  for (int j = 0; j < A_; ++j) log_scale_sum_ += std::log(static_cast<double>(box_.scale[j]));
  actor_ = nn::Mlp(nn::MlpShape(layer_sizes(D_, cfg_.hidden, 2 * A_), nn::Act::kRelu));
  q1_ = nn::Mlp(nn::MlpShape(layer_sizes(D_ + A_, cfg_.hidden, 1), nn::Act::kRelu));
  q2_ = nn::Mlp(q1_.shape());
  init_networks(seed, {&actor_, &q1_, &q2_});
  q1t_ = q1_;
  q2t_ = q2_;
  opt_a_ = nn::Adam(actor_.size(), nn::AdamConfig{cfg_.actor_lr});
  opt_q1_ = nn::Adam(q1_.size(), nn::AdamConfig{cfg_.critic_lr});
  opt_q2_ = nn::Adam(q2_.size(), nn::AdamConfig{cfg_.critic_lr});
  opt_alpha_ = nn::Adam(1, nn::AdamConfig{cfg_.alpha_lr});
  g_a_.resize(actor_.size());
  g_q1_.resize(q1_.size());
  g_q2_.resize(q2_.size());
}

// actor outputs (2A x n) -> mean, bounded log-std, a tanh-squashed sample and its log-probability
void SacLearner::sample_actor(const Eigen::Ref<const Mat>& x, nn::MlpCache& c) {
  const Mat& o = actor_.forward(x, c);
  nn::bounded_log_std(o.bottomRows(A_), kLogStdMin, kLogStdMax, ls_);
  out1_ = o.topRows(A_);
  nn::tanh_gaussian_sample(out1_, ls_, nrng_, ts_);
  ts_.logp.array() -= static_cast<float>(log_scale_sum_);
}

void SacLearner::critic_input(const Mat& x, const Mat& a_tanh) {
  xin_.resize(D_ + A_, x.cols());
  xin_.topRows(D_) = x;
  xin_.bottomRows(A_) =
      (a_tanh.array().colwise() * box_.scale.array()).colwise() + box_.bias.array();
}

void SacLearner::act(const Mat& obs, Mat& actions) {
  sample_actor(obs, ca_);
  actions = (ts_.a.array().colwise() * box_.scale.array()).colwise() + box_.bias.array();
}

void SacLearner::critic_update(const ReplayBatch& b) {
  const int B = static_cast<int>(b.obs.cols());
  // targets: r + gamma (1 - d) (min Q'(s', a') - alpha log pi(a'|s'))
  sample_actor(b.next_obs, ca_);
  critic_input(b.next_obs, ts_.a);
  const Mat& t1 = q1t_.forward(xin_, ct1_);
  const Mat& t2 = q2t_.forward(xin_, ct2_);
  y_.resize(B);
  for (int i = 0; i < B; ++i) {
    const float v = std::min(t1(0, i), t2(0, i)) - static_cast<float>(alpha_) * ts_.logp[i];
    y_[i] = b.rewards[i] + (1.0f - b.terminated[i]) * static_cast<float>(cfg_.gamma) * v;
  }
  xin_.resize(D_ + A_, B);
  xin_.topRows(D_) = b.obs;
  xin_.bottomRows(A_) = b.actions;
  q_loss_ = 0;
  for (int k = 0; k < 2; ++k) {
    nn::Mlp& q = k == 0 ? q1_ : q2_;
    nn::MlpCache& c = k == 0 ? c1_ : c2_;
    nn::Buffer& g = k == 0 ? g_q1_ : g_q2_;
    const Mat& qv = q.forward(xin_, c);
    dq_ = qv - Eigen::Map<const Eigen::RowVectorXf>(y_.data(), B);
    q_loss_ += static_cast<double>(dq_.squaredNorm()) / B;
    dq_ *= 2.0f / B;
    nn::backward(q.shape(), q.data(), dq_, c, g.data());
  }
  opt_q1_.step(q1_.span(), g_q1_);
  opt_q2_.step(q2_.span(), g_q2_);
}

void SacLearner::actor_update(const Mat& obs) {
  const int B = static_cast<int>(obs.cols());
  sample_actor(obs, ca_);
  critic_input(obs, ts_.a);
  const Mat& v1 = q1_.forward(xin_, c1_);
  const Mat& v2 = q2_.forward(xin_, c2_);
  // d/d(Q input) of -mean(min(Q1, Q2)): route each sample through its smaller critic
  Mat d1 = Mat::Zero(1, B), d2 = Mat::Zero(1, B);
  for (int i = 0; i < B; ++i) (v1(0, i) <= v2(0, i) ? d1 : d2)(0, i) = -1.0f / B;
  nn::backward_errors(q1_.shape(), q1_.data(), d1, c1_, true);
  nn::backward_errors(q2_.shape(), q2_.data(), d2, c2_, true);
  dla_ = (c1_.din.bottomRows(A_) + c2_.din.bottomRows(A_)).array().colwise() * box_.scale.array();
  w_.assign(B, static_cast<float>(alpha_ / B));
  nn::tanh_gaussian_backward(ts_, w_, dla_, dmean_, dls_);
  const Mat& o = ca_.a.back();
  nn::bounded_log_std_backward(o.bottomRows(A_), kLogStdMin, kLogStdMax, lsf_);
  dact_.resize(2 * A_, B);
  dact_.topRows(A_) = dmean_;
  dact_.bottomRows(A_) = dls_.cwiseProduct(lsf_);
  nn::backward(actor_.shape(), actor_.data(), dact_, ca_, g_a_.data());
  opt_a_.step(actor_.span(), g_a_);
  if (cfg_.autotune) {
    // alpha loss = mean(-exp(log_alpha) (log pi + target_entropy)), d/d log_alpha
    double m = 0;
    for (int i = 0; i < B; ++i) m += ts_.logp[i] + cfg_.target_entropy;
    const float ga = static_cast<float>(-std::exp(log_alpha_) * m / B);
    opt_alpha_.step({&log_alpha_, 1}, {&ga, 1});
    alpha_ = std::exp(static_cast<double>(log_alpha_));
  }
}

void SacLearner::target_update() {
  nn::polyak_update(q1t_.span(), q1_.span(), cfg_.tau);
  nn::polyak_update(q2t_.span(), q2_.span(), cfg_.tau);
}

void SacLearner::update(const ReplayBatch& b) {
  critic_update(b);
  actor_update(b.obs);
  target_update();
}

std::unique_ptr<Policy> SacLearner::policy(const std::string& env_id) const {
  auto pol = std::make_unique<NnPolicy>(env_id, NnPolicy::Mode::kTanhScaled, actor_, A_);
  pol->set_action_bounds(box_.low, box_.high);
  return pol;
}

void SacLearner::sync_state(StateIo& io) {
  io.section("sac_learner");
  for (nn::Mlp* net : {&actor_, &q1_, &q2_, &q1t_, &q2t_}) io(net->span());
  for (nn::Adam* opt : {&opt_a_, &opt_q1_, &opt_q2_, &opt_alpha_}) opt->sync_state(io);
  io(log_alpha_);
  io(alpha_);
  io(q_loss_);
  io(nrng_);
}

}  // namespace dprl::algos
