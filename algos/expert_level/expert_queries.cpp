#include "algos/expert_level/expert_queries.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "engine/error.hpp"
#include "engine/nn/nn_io.hpp"

namespace dprl::algos {
namespace {

// The greedy action of one output column as NnPolicy::act_discrete picks it (first maximum).
int first_argmax(const float* y, int actions) {
  int best = 0;
  for (int a = 1; a < actions; ++a)
    if (y[a] > y[best]) best = a;
  return best;
}

// Whether the top two of y are close enough that float rounding could swap them.
bool near_tie(const float* y, int actions, int best) {
  float second = -INFINITY;
  for (int a = 0; a < actions; ++a)
    if (a != best) second = std::max(second, y[a]);
  return y[best] - second <= NetExperts::kTieMargin * (1.0f + std::abs(y[best]));
}

std::string meta_value(const std::string& meta, const std::string& key) {
  std::istringstream in(meta);
  std::string tok;
  while (in >> tok)
    if (tok.rfind(key + "=", 0) == 0) return tok.substr(key.size() + 1);
  return "";
}

}  // namespace

NetExperts::NetExperts(std::vector<Expert> experts, int num_actions, int threads)
    : experts_(std::move(experts)), actions_(num_actions) {
  if (experts_.empty()) throw ParamError("expert panel: no experts");
  if (num_actions < 2)
    throw ParamError(fmt::format("expert panel: num_actions = {} must be >= 2", num_actions));
  obs_dim_ = experts_.front().actor.shape().in();
  for (std::size_t i = 0; i < experts_.size(); ++i) {
    const auto& e = experts_[i];
    if (e.actor.shape().in() != obs_dim_ || e.actor.shape().out() < num_actions)
      throw ParamError(fmt::format(
          "expert panel: expert {} maps {} inputs to {} outputs; expected {} inputs and {} actions",
          i, e.actor.shape().in(), e.actor.shape().out(), obs_dim_, num_actions));
    if (!e.obs_mean.empty() &&
        (static_cast<int>(e.obs_mean.size()) != obs_dim_ || e.obs_var.size() != e.obs_mean.size()))
      throw ParamError(fmt::format("expert panel: expert {}: observation normaliser size", i));
  }
  pool_ = std::make_unique<ThreadPool>(threads);
  rechecks_.assign(experts_.size(), 0);
}

std::unique_ptr<NetExperts> NetExperts::load(const std::vector<std::filesystem::path>& files,
                                             int threads) {
  std::vector<Expert> experts;
  experts.reserve(files.size());
  int actions = -1;
  for (const auto& file : files) {
    const nn::NnFile f = nn::load_nn_file(file);
    if (f.kind != "nn_policy" || meta_value(f.meta, "mode") != "argmax")
      throw DataError(fmt::format("{}: not a greedy (argmax) network policy", file.string()));
    const int adim = std::atoi(meta_value(f.meta, "action_dim").c_str());
    if (actions >= 0 && adim != actions)
      throw DataError(
          fmt::format("{}: {} actions, the other experts have {}", file.string(), adim, actions));
    actions = adim;
    Expert e;
    const nn::SavedNet& net = f.net("actor");
    e.actor = nn::Mlp(net.shape);
    e.actor.buffer() = net.params;
    if (f.has_array("obs_mean")) {
      e.obs_mean = f.array("obs_mean").values;
      e.obs_var = f.array("obs_var").values;
    }
    if (!experts.empty() && e.actor.shape().in() != experts.front().actor.shape().in())
      throw DataError(fmt::format("{}: {} inputs, the other experts have {}", file.string(),
                                  e.actor.shape().in(), experts.front().actor.shape().in()));
    experts.push_back(std::move(e));
  }
  return std::make_unique<NetExperts>(std::move(experts), actions, threads);
}

void NetExperts::greedy(const float* obs, int n, std::span<std::int32_t> out) {
  DPRL_CHECK(out.size() == experts_.size() * static_cast<std::size_t>(n));
  if (n == 0) return;
  pool_->parallel_for(experts_.size(), [&](std::size_t i) {
    thread_local nn::MlpCache cache;
    thread_local nn::Mat x;
    thread_local std::vector<float> scratch, y1;
    const Expert& e = experts_[i];
    const nn::CMatMap raw(obs, obs_dim_, n);
    const bool norm = !e.obs_mean.empty();
    if (norm) {  // NnPolicy's normaliser, in the same float operations
      x.resize(obs_dim_, n);
      for (int j = 0; j < n; ++j)
        for (int d = 0; d < obs_dim_; ++d)
          x(d, j) = std::clamp((raw(d, j) - e.obs_mean[d]) / std::sqrt(e.obs_var[d] + 1e-8f),
                               -10.0f, 10.0f);
    }
    const nn::Mat& y = norm ? e.actor.forward(x, cache) : e.actor.forward(raw, cache);
    y1.resize(e.actor.shape().out());
    for (int j = 0; j < n; ++j) {
      int best = first_argmax(&y(0, j), actions_);
      if (near_tie(&y(0, j), actions_, best)) {
        const float* col = norm ? x.data() + static_cast<std::size_t>(j) * obs_dim_
                                : obs + static_cast<std::size_t>(j) * obs_dim_;
        nn::forward_one(e.actor.shape(), e.actor.data(), col, y1.data(), scratch);
        best = first_argmax(y1.data(), actions_);
        ++rechecks_[i];
      }
      out[i * static_cast<std::size_t>(n) + j] = best;
    }
  });
  rechecked_ = std::accumulate(rechecks_.begin(), rechecks_.end(), std::int64_t{0});
}

FunctionExperts::FunctionExperts(int m, int num_actions, int obs_dim, Greedy g)
    : m_(m), actions_(num_actions), obs_dim_(obs_dim), g_(std::move(g)) {
  if (m < 1) throw ParamError(fmt::format("expert panel: m = {} must be >= 1", m));
  if (num_actions < 2)
    throw ParamError(fmt::format("expert panel: num_actions = {} must be >= 2", num_actions));
}

void FunctionExperts::greedy(const float* obs, int n, std::span<std::int32_t> out) {
  DPRL_CHECK(out.size() == static_cast<std::size_t>(m_) * static_cast<std::size_t>(n));
  for (int i = 0; i < m_; ++i)
    for (int j = 0; j < n; ++j) {
      const int a = g_(i, std::span<const float>(obs + static_cast<std::size_t>(j) * obs_dim_,
                                                 static_cast<std::size_t>(obs_dim_)));
      if (a < 0 || a >= actions_)
        throw DataError(fmt::format("expert {}: greedy action {} outside [0, {})", i, a, actions_));
      out[static_cast<std::size_t>(i) * n + j] = a;
    }
}

PrefixCounter::PrefixCounter(int m, int num_actions, double p_min, int max_length)
    : m_(m), max_length_(max_length) {
  if (m < 1) throw ParamError(fmt::format("prefix counter: m = {} must be >= 1", m));
  if (num_actions < 2)
    throw ParamError(fmt::format("prefix counter: num_actions = {} must be >= 2", num_actions));
  if (!(p_min > 0.0 && p_min <= 1.0 / num_actions))
    throw ParamError(fmt::format("p_min = {} must be in (0, 1/|A|] = (0, {:.6g}] for {} actions",
                                 p_min, 1.0 / num_actions, num_actions));
  if (max_length < 1)
    throw ParamError(fmt::format("prefix counter: max_length = {} must be >= 1", max_length));
  log_hi_ = std::log1p(-static_cast<double>(num_actions - 1) * p_min);
  log_lo_ = std::log(p_min);
  const double d = log_hi_ - log_lo_;  // >= 0 (0 only at p_min = 1/|A|: uniform experts)
  decay_.resize(static_cast<std::size_t>(max_length) + 1);
  for (int j = 0; j <= max_length; ++j) decay_[j] = std::exp(-d * j);
  agree_.assign(m, 0);
  reset();
}

void PrefixCounter::reset() {
  std::fill(agree_.begin(), agree_.end(), 0);
  a_max_ = 0;
  k_ = 0;
  log_count_ = std::log(static_cast<double>(m_));
}

double PrefixCounter::extend(std::span<const std::int32_t> greedy, std::int32_t action) {
  DPRL_CHECK(greedy.size() == agree_.size());
  if (k_ >= max_length_)
    throw ParamError(
        fmt::format("prefix counter: prefix longer than max_length = {}", max_length_));
  ++k_;
  std::int32_t a_max = a_max_;
  for (std::size_t i = 0; i < agree_.size(); ++i) {
    agree_[i] += greedy[i] == action ? 1 : 0;
    a_max = std::max(a_max, agree_[i]);
  }
  a_max_ = a_max;
  double sum = 0.0;
  for (std::size_t i = 0; i < agree_.size(); ++i) sum += decay_[a_max - agree_[i]];
  log_count_ = k_ * log_lo_ + a_max * (log_hi_ - log_lo_) + std::log(sum);
  return log_count_;
}

double PrefixCounter::count() const { return std::exp(log_count_); }

}  // namespace dprl::algos
