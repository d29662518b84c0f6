#include "algos/core/nn_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "engine/error.hpp"
#include "engine/nn/nn_io.hpp"

namespace dprl::algos {

namespace {
const char* mode_name(NnPolicy::Mode m) {
  switch (m) {
    case NnPolicy::Mode::kArgmax:
      return "argmax";
    case NnPolicy::Mode::kClip:
      return "clip";
    case NnPolicy::Mode::kTanhScaled:
      return "tanh_scaled";
  }
  return "?";
}
}  // namespace

NnPolicy::NnPolicy(std::string env_id, Mode mode, nn::Mlp actor, int action_dim)
    : env_id_(std::move(env_id)), mode_(mode), actor_(std::move(actor)), action_dim_(action_dim) {
  DPRL_CHECK(action_dim_ >= 1 && action_dim_ <= actor_.shape().out());
  x_.resize(actor_.shape().in());
  y_.resize(actor_.shape().out());
}

void NnPolicy::set_obs_norm(std::vector<float> mean, std::vector<float> var) {
  DPRL_CHECK(static_cast<int>(mean.size()) == obs_dim() && mean.size() == var.size());
  obs_mean_ = std::move(mean);
  obs_var_ = std::move(var);
}

void NnPolicy::set_action_bounds(std::vector<float> low, std::vector<float> high) {
  DPRL_CHECK(static_cast<int>(low.size()) == action_dim_ && low.size() == high.size());
  low_ = std::move(low);
  high_ = std::move(high);
}

const float* NnPolicy::outputs(std::span<const float> obs) {
  if (static_cast<int>(obs.size()) != obs_dim())
    throw DataError(fmt::format("nn_policy: observation of {} values, network expects {}",
                                obs.size(), obs_dim()));
  for (int i = 0; i < obs_dim(); ++i) {
    float v = obs[i];
    if (!obs_mean_.empty())
      v = std::clamp((v - obs_mean_[i]) / std::sqrt(obs_var_[i] + 1e-8f), -10.0f, 10.0f);
    x_[i] = v;
  }
  nn::forward_one(actor_.shape(), actor_.data(), x_.data(), y_.data(), scratch_);
  return y_.data();
}

std::int64_t NnPolicy::act_discrete(std::span<const float> obs,
                                    std::span<const std::uint8_t> mask) {
  if (mode_ != Mode::kArgmax) return Policy::act_discrete(obs, mask);
  const float* y = outputs(obs);
  int best = -1;
  for (int a = 0; a < action_dim_; ++a)
    if ((mask.empty() || mask[a]) && (best < 0 || y[a] > y[best])) best = a;
  return std::max(best, 0);
}

void NnPolicy::act_continuous(std::span<const float> obs, std::span<double> action) {
  if (mode_ == Mode::kArgmax) return Policy::act_continuous(obs, action);
  const float* y = outputs(obs);
  for (int j = 0; j < action_dim_; ++j) {
    double v = y[j];
    if (mode_ == Mode::kClip) {
      if (!low_.empty()) v = std::clamp(v, double{low_[j]}, double{high_[j]});
    } else {
      const double t = squash_ ? std::tanh(v) : v;
      const double lo = low_.empty() ? -1.0 : low_[j], hi = high_.empty() ? 1.0 : high_[j];
      v = std::clamp(lo + 0.5 * (t + 1.0) * (hi - lo), lo, hi);
    }
    action[j] = v;
  }
}

void NnPolicy::save(const std::filesystem::path& file) const {
  nn::NnFile f;
  f.kind = "nn_policy";
  f.meta = fmt::format("env={} mode={} action_dim={} squash={}", env_id_, mode_name(mode_),
                       action_dim_, squash_ ? 1 : 0);
  f.nets.push_back({"actor", actor_.shape(), actor_.buffer()});
  if (!obs_mean_.empty()) {
    f.arrays.push_back({"obs_mean", obs_mean_});
    f.arrays.push_back({"obs_var", obs_var_});
  }
  if (!low_.empty()) {
    f.arrays.push_back({"low", low_});
    f.arrays.push_back({"high", high_});
  }
  nn::save_nn_file(file, f);
}

std::unique_ptr<NnPolicy> NnPolicy::load(const std::filesystem::path& file) {
  const nn::NnFile f = nn::load_nn_file(file);
  if (f.kind != "nn_policy")
    throw DataError(
        fmt::format("{}: network file of kind '{}', not a policy", file.string(), f.kind));
  std::string env, mode;
  int adim = 0, squash = 1;
  std::istringstream in(f.meta);
  std::string tok;
  while (in >> tok) {
    const auto eq = tok.find('=');
    if (eq == std::string::npos) continue;
    const std::string k = tok.substr(0, eq), v = tok.substr(eq + 1);
    if (k == "env") env = v;
    if (k == "mode") mode = v;
    if (k == "action_dim") adim = std::atoi(v.c_str());
    if (k == "squash") squash = std::atoi(v.c_str());
  }
  Mode m;
  if (mode == "argmax")
    m = Mode::kArgmax;
  else if (mode == "clip")
    m = Mode::kClip;
  else if (mode == "tanh_scaled")
    m = Mode::kTanhScaled;
  else
    throw DataError(fmt::format("{}: unknown policy mode '{}'", file.string(), mode));
  const nn::SavedNet& net = f.net("actor");
  if (adim < 1 || adim > net.shape.out())
    throw DataError(fmt::format("{}: bad action_dim {}", file.string(), adim));
  nn::Mlp actor(net.shape);
  actor.buffer() = net.params;
  auto pol = std::make_unique<NnPolicy>(env, m, std::move(actor), adim);
  pol->set_squash_output(squash != 0);
  if (f.has_array("obs_mean")) {
    const auto& mu = f.array("obs_mean").values;
    const auto& var = f.array("obs_var").values;
    if (static_cast<int>(mu.size()) != pol->obs_dim() || var.size() != mu.size())
      throw DataError(fmt::format("{}: observation normaliser size mismatch", file.string()));
    pol->set_obs_norm(mu, var);
  }
  if (f.has_array("low")) {
    const auto& lo = f.array("low").values;
    const auto& hi = f.array("high").values;
    if (static_cast<int>(lo.size()) != adim || hi.size() != lo.size())
      throw DataError(fmt::format("{}: action bounds size mismatch", file.string()));
    pol->set_action_bounds(lo, hi);
  }
  return pol;
}

BoxActionMap box_action_map(const EnvSpec& spec, std::string_view algo) {
  if (spec.action.is_discrete() || spec.observation.is_discrete())
    throw ParamError(fmt::format(
        "{} needs Box observations and actions; env '{}' has observation {} and action {}", algo,
        spec.id, spec.observation.describe(), spec.action.describe()));
  BoxActionMap m;
  m.low.assign(spec.action.low.begin(), spec.action.low.end());
  m.high.assign(spec.action.high.begin(), spec.action.high.end());
  const auto a = static_cast<Eigen::Index>(m.low.size());
  m.scale.resize(a);
  m.bias.resize(a);
  for (Eigen::Index j = 0; j < a; ++j) {
    m.scale[j] = 0.5f * (m.high[j] - m.low[j]);
    m.bias[j] = 0.5f * (m.high[j] + m.low[j]);
  }
  return m;
}

}  // namespace dprl::algos
