#include "algos/offline/bc.hpp"

#include <cmath>

#include "algos/core/networks.hpp"
#include "algos/core/nn_policy.hpp"

namespace dprl::algos {

double imitation_errors(const nn::Mat& logits, int i, int action, double beta, float scale,
                        nn::Mat& dout) {
  const int A = static_cast<int>(logits.rows());
  const float mx = logits.col(i).maxCoeff();
  float sum = 0.0f, sq = 0.0f;
  for (int j = 0; j < A; ++j) {
    const float e = std::exp(logits(j, i) - mx);
    dout(j, i) = e;
    sum += e;
    sq += logits(j, i) * logits(j, i);
  }
  const float lse = mx + std::log(sum);
  // d/dz [lse(z) - z_a + (beta / A) |z|^2] = softmax(z) - e_a + (2 beta / A) z
  const float reg = static_cast<float>(2.0 * beta / A);
  for (int j = 0; j < A; ++j) dout(j, i) = scale * (dout(j, i) / sum + reg * logits(j, i));
  dout(action, i) -= scale;
  return static_cast<double>(lse - logits(action, i)) + beta / A * sq;
}

void BcParams::check() const {
  parse_hidden_sizes(common.hidden_sizes, "bc.hidden_sizes", common.batch_size, "bc.batch_size");
  dp.check("bc");
}

Bc::Bc(const Params& p) : OfflineLearner("bc", p.common, p.dp), p_(p) { validate_params(p_, "bc"); }

void Bc::build(int obs_dim, int actions, std::uint64_t seed) {
  net_ = make_relu_mlp(obs_dim, hidden(), actions, seed, 0);
}

double Bc::compute_errors(const OfflineBatch& b, float dout_scale) {
  const nn::Mat& logits = net_.forward(b.obs, cache_);
  dout_.resize(actions_, b.n);
  double loss = 0.0;
  for (int i = 0; i < b.n; ++i)
    loss += imitation_errors(logits, i, b.actions[i], p_.beta, dout_scale, dout_);
  nn::backward_errors(net_.shape(), net_.data(), dout_, cache_);
  return b.n > 0 ? loss / b.n : 0.0;
}

std::unique_ptr<Policy> Bc::policy() const {
  return std::make_unique<NnPolicy>(env_id_, NnPolicy::Mode::kArgmax, net_, actions_);
}

void Bc::save_policy(const std::filesystem::path& file) const {
  NnPolicy(env_id_, NnPolicy::Mode::kArgmax, net_, actions_).save(file);
}

void Bc::released_outputs(const nn::Mat& obs, nn::Mat& out) const {
  nn::MlpCache c;
  out = net_.forward(obs, c);
}

}  // namespace dprl::algos
