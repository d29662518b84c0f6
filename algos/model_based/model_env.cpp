#include "algos/model_based/model_env.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"

namespace dprl::algos::model_based {

using nn::Mat;

Penalty parse_penalty(const std::string& name, const std::string& what) {
  if (name == "ma_std") return Penalty::kMaStd;
  if (name == "ma_variance") return Penalty::kMaVariance;
  if (name == "mpd") return Penalty::kMpd;
  if (name == "none") return Penalty::kNone;
  throw ParamError(
      fmt::format("{} = '{}' must be one of ma_std, ma_variance, mpd, none", what, name));
}

void penalty_ma(const Mat& logvar, int members, int out, bool use_std, std::span<float> u) {
  DPRL_CHECK(logvar.rows() == static_cast<Eigen::Index>(members) * out);
  DPRL_CHECK(static_cast<Eigen::Index>(u.size()) == logvar.cols());
  const float k = use_std ? 0.5f : 1.0f;  // sqrt(v) = exp(logvar / 2)
  for (Eigen::Index b = 0; b < logvar.cols(); ++b) {
    float best = 0.0f;
    for (int i = 0; i < members; ++i) {
      const float n = (k * logvar.col(b).segment(i * out, out).array()).exp().matrix().norm();
      best = std::max(best, n);
    }
    u[b] = best;
  }
}

void penalty_mpd(const Mat& mean, int members, int out, int dims, std::span<float> u) {
  DPRL_CHECK(mean.rows() == static_cast<Eigen::Index>(members) * out && dims <= out);
  DPRL_CHECK(static_cast<Eigen::Index>(u.size()) == mean.cols());
  for (Eigen::Index b = 0; b < mean.cols(); ++b) {
    float best = 0.0f;
    for (int i = 0; i < members; ++i)
      for (int j = i + 1; j < members; ++j) {
        const float d =
            (mean.col(b).segment(i * out, dims) - mean.col(b).segment(j * out, dims)).norm();
        best = std::max(best, d);
      }
    u[b] = best;
  }
}

ModelEnv::ModelEnv(const ProbEnsemble& model, ModelEnvConfig cfg)
    : model_(model), cfg_(std::move(cfg)) {
  if (!(cfg_.lambda >= 0.0) || !std::isfinite(cfg_.lambda))
    throw ParamError(fmt::format("penalty_lambda = {} must be >= 0 and finite", cfg_.lambda));
  if (cfg_.penalty == Penalty::kMpd && model.members() < 2)
    throw ParamError(fmt::format("penalty = mpd needs members >= 2 (got {})", model.members()));
  if (cfg_.members.empty())
    for (int i = 0; i < model.members(); ++i) cfg_.members.push_back(i);
  for (int m : cfg_.members) DPRL_CHECK(m >= 0 && m < model.members());
}

void ModelEnv::step(const Mat& s, const Mat& a, Rng& rng, Mat& next, std::vector<float>& reward,
                    std::vector<float>& raw_reward, std::vector<float>& penalty) {
  const int o = model_.out_dim(), D = o - 1, N = model_.members();
  const auto B = s.cols();
  DPRL_CHECK(s.rows() == D && a.cols() == B && s.rows() + a.rows() == model_.in_dim());
  x_.resize(model_.in_dim(), B);
  x_.topRows(D) = s;
  x_.bottomRows(a.rows()) = a;
  model_.predict(x_, mean_, logvar_, work_);
  penalty.resize(B);
  switch (cfg_.penalty) {
    case Penalty::kMaStd:
    case Penalty::kMaVariance:
      penalty_ma(logvar_, N, o, cfg_.penalty == Penalty::kMaStd, penalty);
      break;
    case Penalty::kMpd:
      penalty_mpd(mean_, N, o, cfg_.mpd_with_reward ? o : D, penalty);
      break;
    case Penalty::kNone:
      std::fill(penalty.begin(), penalty.end(), 0.0f);
      break;
  }
  next.resize(D, B);
  reward.resize(B);
  raw_reward.resize(B);
  const bool clip = !cfg_.obs_low.empty();
  const float lam = static_cast<float>(cfg_.lambda);
  for (Eigen::Index b = 0; b < B; ++b) {
    const int m = cfg_.members[rng.below(cfg_.members.size())];
    for (int j = 0; j < o; ++j) {
      const float mu = mean_(m * o + j, b);
      const float sd = std::exp(0.5f * logvar_(m * o + j, b));
      const float v = mu + sd * static_cast<float>(rng.normal());
      if (j < D) {
        float ns = s(j, b) + v;
        if (clip) ns = std::clamp(ns, cfg_.obs_low[j], cfg_.obs_high[j]);
        next(j, b) = ns;
      } else {
        raw_reward[b] = v;
      }
    }
    reward[b] = raw_reward[b] - lam * penalty[b];
  }
}

}  // namespace dprl::algos::model_based
