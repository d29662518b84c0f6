#include "algos/kickstart/kickstart_teacher.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "algos/online/ppo.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/nn/nn_io.hpp"
#include "engine/rng.hpp"

namespace dprl::algos {

TeacherPolicy TeacherPolicy::load(const std::filesystem::path& file, std::string_view key) {
  // a FIFO, a device or a folder is named as such, never opened (a FIFO would block)
  if (const std::string problem = file_problem(file); !problem.empty())
    throw ParamError(fmt::format("{} = '{}': {}", key, file.string(),
                                 problem == "missing" ? "no such file" : problem));
  nn::NnFile f;
  try {
    f = nn::load_nn_file(file);
  } catch (const Error& e) {
    throw DataError(fmt::format("{}: {}", key, e.what()));
  }
  if (f.kind != "nn_policy" || f.meta.find("mode=argmax") == std::string::npos)
    throw DataError(fmt::format("{} = '{}': not a discrete policy file (kind '{}', {})", key,
                                file.string(), f.kind, f.meta));
  int adim = 0;
  if (const auto at = f.meta.find("action_dim="); at != std::string::npos)
    adim = std::atoi(f.meta.c_str() + at + 11);
  TeacherPolicy t;
  const nn::SavedNet& net = f.net("actor");
  if (adim < 2 || adim != net.shape.out())
    throw DataError(fmt::format("{} = '{}': {} actions, actor has {} outputs", key, file.string(),
                                adim, net.shape.out()));
  t.actor_ = nn::Mlp(net.shape);
  t.actor_.buffer() = net.params;
  t.actions_ = adim;
  if (f.has_array("obs_mean")) {
    t.mean_ = f.array("obs_mean").values;
    t.var_ = f.array("obs_var").values;
    if (static_cast<int>(t.mean_.size()) != t.obs_dim() || t.var_.size() != t.mean_.size())
      throw DataError(
          fmt::format("{} = '{}': observation normaliser size mismatch", key, file.string()));
  }
  // certified Lipschitz bound (see the header)
  t.lip_.actor = nn::mlp_lipschitz(t.actor_.shape(), t.actor_.data());
  for (float v : t.var_) {
    if (!(v >= 0.0f)) throw DataError(fmt::format("{}: negative observation variance", key));
    // the forward computes in float; 1e-6 covers its rounding of var + 1e-8 and the sqrt
    t.lip_.obs_scale = std::max(t.lip_.obs_scale, (1.0 + 1e-6) / std::sqrt(double{v} + 1e-8));
  }
  t.lip_.upper = t.lip_.obs_scale * t.lip_.actor.upper * t.lip_.softmax;
  t.lip_.estimate = t.lip_.obs_scale * t.lip_.actor.estimate * t.lip_.softmax;
  if (!(std::isfinite(t.lip_.upper) && t.lip_.upper > 0))
    throw DataError(fmt::format("{} = '{}': Lipschitz bound {} is not a positive number", key,
                                file.string(), t.lip_.upper));
  return t;
}

void TeacherPolicy::check_spaces(const EnvSpec& spec, std::string_view key) const {
  if (!spec.action.is_discrete() || spec.action.n != actions_ ||
      static_cast<int>(spec.observation.dim()) != obs_dim())
    throw ParamError(fmt::format(
        "{}: the teacher has {} observation values and Discrete({}) actions; env '{}' has "
        "observation {} and action {}",
        key, obs_dim(), actions_, spec.id, spec.observation.describe(), spec.action.describe()));
}

void TeacherPolicy::probabilities(std::span<const float> obs, int n, Eigen::MatrixXd& probs) {
  const int d = obs_dim();
  DPRL_CHECK(static_cast<int>(obs.size()) >= d * n);
  if (x_.cols() != n) x_.resize(d, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < d; ++i) {
      float v = obs[static_cast<std::size_t>(j) * d + i];
      if (!mean_.empty())  // as NnPolicy
        v = std::clamp((v - mean_[i]) / std::sqrt(var_[i] + 1e-8f), -10.0f, 10.0f);
      x_(i, j) = v;
    }
  const nn::Mat& z = actor_.forward(x_, cache_);
  if (probs.rows() != actions_ || probs.cols() != n) probs.resize(actions_, n);
  for (int j = 0; j < n; ++j) {
    double mx = -std::numeric_limits<double>::infinity();
    for (int a = 0; a < actions_; ++a) mx = std::max(mx, double{z(a, j)});
    double sum = 0;
    for (int a = 0; a < actions_; ++a) sum += probs(a, j) = std::exp(double{z(a, j)} - mx);
    for (int a = 0; a < actions_; ++a) probs(a, j) /= sum;
  }
}

void train_teacher(const std::filesystem::path& file, TrainContext& ctx, int hidden_size,
                   std::int64_t steps) {
  PpoParams p;
  p.hidden_size = hidden_size;
  Ppo teacher(p);
  TrainParams tp;
  tp.steps = steps;
  tp.eval_every = 0;
  tp.eval_episodes = 1;
  TrainContext tctx([&ctx] { return ctx.make_env(); }, derive_seed(ctx.seed(), Domain::kAlgo, 7),
                    tp, nullptr, nullptr);
  teacher.train(tctx);
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  teacher.save_policy(file);
}

}  // namespace dprl::algos
