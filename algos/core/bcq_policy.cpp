#include "algos/core/bcq_policy.hpp"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "engine/error.hpp"
#include "engine/nn/nn_io.hpp"

namespace dprl::algos {

int bcq_select(const float* q, const float* logits, int actions, double log_threshold,
               std::span<const std::uint8_t> env_mask) {
  float gmax = logits[0], qmin = q[0];
  for (int a = 1; a < actions; ++a) {
    gmax = std::max(gmax, logits[a]);
    qmin = std::min(qmin, q[a]);
  }
  // log softmax differences equal logit differences
  int best = -1;
  float best_v = 0.0f;
  for (int a = 0; a < actions; ++a) {
    const bool ok = static_cast<double>(logits[a] - gmax) > log_threshold &&
                    (env_mask.empty() || env_mask[a] != 0);
    const float v = ok ? (q[a] - qmin + 1e-5f) : 0.0f;
    if (best < 0 || v > best_v) {
      best = a;
      best_v = v;
    }
  }
  return best;
}

BcqPolicy::BcqPolicy(std::string env_id, nn::Mlp q, nn::Mlp g, double threshold)
    : env_id_(std::move(env_id)), q_(std::move(q)), g_(std::move(g)), threshold_(threshold) {
  DPRL_CHECK(q_.shape().in() == g_.shape().in() && q_.shape().out() == g_.shape().out());
  DPRL_CHECK(threshold_ > 0.0 && threshold_ <= 1.0);
  qv_.resize(q_.shape().out());
  gv_.resize(g_.shape().out());
}

std::int64_t BcqPolicy::act_discrete(std::span<const float> obs,
                                     std::span<const std::uint8_t> mask) {
  if (static_cast<int>(obs.size()) != obs_dim())
    throw DataError(fmt::format("bcq_policy: observation of {} values, network expects {}",
                                obs.size(), obs_dim()));
  nn::forward_one(q_.shape(), q_.data(), obs.data(), qv_.data(), scratch_);
  nn::forward_one(g_.shape(), g_.data(), obs.data(), gv_.data(), scratch_);
  return bcq_select(qv_.data(), gv_.data(), actions(), std::log(threshold_), mask);
}

void BcqPolicy::save(const std::filesystem::path& file) const {
  nn::NnFile f;
  f.kind = "bcq_policy";
  f.meta = fmt::format("env={} threshold={:.17g}", env_id_, threshold_);
  f.nets.push_back({"q", q_.shape(), q_.buffer()});
  f.nets.push_back({"g", g_.shape(), g_.buffer()});
  nn::save_nn_file(file, f);
}

std::unique_ptr<BcqPolicy> BcqPolicy::load(const std::filesystem::path& file) {
  const nn::NnFile f = nn::load_nn_file(file);
  if (f.kind != "bcq_policy")
    throw DataError(
        fmt::format("{}: network file of kind '{}', not a bcq_policy", file.string(), f.kind));
  std::string env;
  double threshold = -1.0;
  std::istringstream in(f.meta);
  std::string tok;
  while (in >> tok) {
    const auto eq = tok.find('=');
    if (eq == std::string::npos) continue;
    if (tok.substr(0, eq) == "env") env = tok.substr(eq + 1);
    if (tok.substr(0, eq) == "threshold") threshold = std::strtod(tok.c_str() + eq + 1, nullptr);
  }
  if (!(threshold > 0.0 && threshold <= 1.0))
    throw DataError(fmt::format("{}: threshold must be in (0, 1]", file.string()));
  const nn::SavedNet& q = f.net("q");
  const nn::SavedNet& g = f.net("g");
  if (q.shape.in() != g.shape.in() || q.shape.out() != g.shape.out())
    throw DataError(
        fmt::format("{}: nets q and g have different inputs or outputs", file.string()));
  nn::Mlp qn(q.shape), gn(g.shape);
  qn.buffer() = q.params;
  gn.buffer() = g.params;
  return std::make_unique<BcqPolicy>(env, std::move(qn), std::move(gn), threshold);
}

nn::Mlp stack_trunk_head(const nn::Mlp& trunk, const nn::Mlp& head) {
  const nn::MlpShape& ts = trunk.shape();
  const nn::MlpShape& hs = head.shape();
  DPRL_CHECK(hs.num_layers() == 1 && hs.in() == ts.out());
  std::vector<int> sizes = ts.sizes;
  sizes.push_back(hs.out());
  nn::Mlp full(nn::MlpShape(sizes, ts.hidden, hs.output));
  for (int l = 0; l < ts.num_layers(); ++l) {
    full.shape().weight(full.data(), l) = ts.weight(trunk.data(), l);
    full.shape().bias(full.data(), l) = ts.bias(trunk.data(), l);
  }
  const int last = ts.num_layers();
  full.shape().weight(full.data(), last) = hs.weight(head.data(), 0);
  full.shape().bias(full.data(), last) = hs.bias(head.data(), 0);
  return full;
}

}  // namespace dprl::algos
