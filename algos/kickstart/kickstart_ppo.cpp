#include "algos/kickstart/kickstart_ppo.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "algos/kickstart/kickstart_loss.hpp"
#include "engine/error.hpp"
#include "engine/state_io.hpp"

namespace dprl::algos {

namespace {

constexpr const char* kOwner = "ppo_kickstart";
// derive_seed(seed, kDpNoise, kKickstartNoiseStream, b): b = 0 the answers (seeded mode), b = 1 the
// Monte Carlo delta certificates
constexpr std::uint64_t kKickstartNoiseStream = 3;

PpoUpdateStyle style_of(const PpoKickstartParams& p) {
  return {p.style == "spinning_up", p.vf_learning_rate};
}

double nan_if_none(double sum, std::int64_t n) {
  return n > 0 ? sum / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

ParamMap kickstart_spinning_up_preset() {
  // Spinning Up (PyTorch) ppo(): gamma 0.99, clip_ratio 0.2, pi_lr 3e-4, vf_lr 1e-3,
  // train_pi_iters = train_v_iters = 80, lam 0.97, target_kl 0.01, hidden (64, 64) tanh; the
  // value loss mean((v - R)^2) has gradient 2 (v - R) / n, hence vf_coef 2
  const std::pair<const char*, const char*> kv[] = {{"style", "spinning_up"},
                                                    {"num_envs", "1"},
                                                    {"num_steps", "1000"},
                                                    {"num_minibatches", "1"},
                                                    {"update_epochs", "80"},
                                                    {"learning_rate", "3e-4"},
                                                    {"vf_learning_rate", "1e-3"},
                                                    {"anneal_lr", "false"},
                                                    {"gamma", "0.99"},
                                                    {"gae_lambda", "0.97"},
                                                    {"clip_coef", "0.2"},
                                                    {"clip_vloss", "false"},
                                                    {"ent_coef", "0"},
                                                    {"vf_coef", "2"},
                                                    {"target_kl", "0.01"},
                                                    {"norm_adv", "true"},
                                                    {"hidden_size", "64"},
                                                    {"hidden_layers", "2"},
                                                    {"activation", "tanh"}};
  ParamMap m;
  for (const auto& [k, v] : kv) m.push_back({k, {v, "preset of ppo_kickstart_spinup"}});
  return m;
}

void PpoKickstartParams::check() const {
  PpoParams::check();
  if (!(tau > 0.0 && tau <= eta))
    throw ParamError(fmt::format("{}.tau = {}: must be in (0, eta] = (0, {}]", kOwner, tau, eta));
  if (teacher_mode != "off" && teacher.empty())
    throw ParamError(fmt::format(
        "{}.teacher: a teacher policy file is required unless teacher_mode = off", kOwner));
}

PpoKickstart::PpoKickstart(const PpoKickstartParams& p)
    : PpoHooks(), Ppo(p, this, style_of(p)), kp_(p) {
  validate_params(kp_, kOwner);
}

PpoKickstart::~PpoKickstart() = default;

void PpoKickstart::check_env(const EnvSpec& spec) const {
  if (kp_.teacher_mode == "off") return;
  const std::string key = fmt::format("{}.teacher", kOwner);
  if (!spec.action.is_discrete())
    throw ParamError(fmt::format("{}: kickstarting needs discrete actions; env '{}' has {}", key,
                                 spec.id, spec.action.describe()));
  const auto m = spec.action.n;
  if (m > kKickstartMaxActions)
    throw ParamError(fmt::format("{}: env '{}' has {} actions, at most {} are supported", key,
                                 spec.id, m, kKickstartMaxActions));
  if (!(kp_.eta < 1.0 / static_cast<double>(m)))
    throw ParamError(fmt::format("{}.eta = {}: must be in [0, 1/m) = [0, {:.6g}) for m = {}",
                                 kOwner, kp_.eta, 1.0 / static_cast<double>(m), m));
  std::error_code ec;
  if (std::filesystem::exists(kp_.teacher, ec)) {
    TeacherPolicy::load(kp_.teacher, key).check_spaces(spec, key);
  } else if (kp_.teacher_train_steps == 0) {
    throw ParamError(fmt::format("{} = '{}': no such file (teacher_train_steps > 0 trains one)",
                                 key, kp_.teacher));
  }
}

TrainSteps PpoKickstart::train(TrainContext& ctx) {
  on_ = kp_.teacher_mode != "off";
  if (on_) {
    const auto env = ctx.make_env();
    check_env(env->spec());
    std::error_code ec;
    if (!std::filesystem::exists(kp_.teacher, ec))
      train_teacher(kp_.teacher, ctx, kp_.teacher_hidden_size, kp_.teacher_train_steps);
    teacher_ = TeacherPolicy::load(kp_.teacher, fmt::format("{}.teacher", kOwner));
    teacher_->check_spaces(env->spec(), fmt::format("{}.teacher", kOwner));
  }
  const TrainSteps done = Ppo::train(ctx);
  finish();
  return done;
}

void PpoKickstart::begin(TrainContext& ctx, const EnvSpec& spec, int batch) {
  m_ = static_cast<int>(spec.action.n);
  ctx.use_custom_rows();
  eval_rounds_ = ctx.eval_rounds();
  ret_sum_ = phi_sum_ = 0;
  ret_n_ = phi_n_ = phi_on_ = queries_ = 0;
  last_k_ = std::numeric_limits<double>::quiet_NaN();
  epoch_returns_.clear();
  report_.reset();
  extra_.clear();
  if (!on_) return;
  answers_.setZero(m_, batch);
  alpha_.assign(batch, 0.0f);
  has_.assign(batch, 0);
  k_.assign(batch, 0.0);
  answer_.assign(m_, 0.0);
  if (kp_.teacher_mode != "dirichlet") return;
  // the rows come from students trained on private answers: written out only with checkpoints
  ctx.hold_metrics_until_checkpoints();
  noise_ = kp_.noise == "seeded" ? privacy::make_seeded_noise(ctx.seed(), kKickstartNoiseStream, 0)
                                 : privacy::make_os_entropy_noise();
  mc_noise_ = privacy::make_seeded_noise(ctx.seed(), kKickstartNoiseStream, 1);
  privacy::DirichletTeacherParams d;
  d.k0 = kp_.k0;
  d.decay = kp_.decay;
  d.k_floor = kp_.k_floor;
  d.after_floor = kp_.after_floor;
  d.eta = kp_.eta;
  d.tau = kp_.tau;
  d.adjacency = kp_.adjacency;
  d.lipschitz = teacher_->lipschitz().upper;
  d.actions = m_;
  d.budget_epsilon = kp_.budget_epsilon;
  d.budget_delta = kp_.budget_delta;
  d.delta_samples = kp_.delta_samples;
  mech_ = std::make_unique<privacy::DirichletTeacher>(d, *mc_noise_);
}

void PpoKickstart::sync_state(StateIo& io) {
  io.section(fmt::format("{} ({})", kOwner, kp_.teacher_mode));
  constexpr std::int64_t kMax = std::int64_t{1} << 62;
  io(ret_sum_);
  io.bounded(ret_n_, std::int64_t{0}, kMax, "returns summed");
  io.bounded(phi_n_, std::int64_t{0}, kMax, "phi terms");
  io.bounded(phi_on_, std::int64_t{0}, kMax, "active phi terms");
  io.bounded(queries_, std::int64_t{0}, kMax, "teacher queries");
  io(phi_sum_);
  io(last_k_);
  io.bounded(eval_rounds_, 0, std::numeric_limits<int>::max() - 1, "evaluations seen");
  io(epoch_returns_);
  if (!mech_) return;
  mech_->sync_state(io);
  noise_->sync_state(io);
  mc_noise_->sync_state(io);
}

void PpoKickstart::on_step(int t, std::span<const float> raw_obs, int n) {
  if (!on_) return;
  teacher_->probabilities(raw_obs, n, probs_);
  const bool exact = kp_.teacher_mode == "exact";
  for (int i = 0; i < n; ++i) {
    const int s = t * n + i;
    ++queries_;
    const std::span<const double> p(probs_.col(i).data(), static_cast<std::size_t>(m_));
    double k = std::numeric_limits<double>::infinity();
    bool given = true;
    if (exact) {
      for (int a = 0; a < m_; ++a) {
        if (!std::isfinite(p[a]))
          throw DataError(fmt::format("{}: the teacher's policy is not finite", kOwner));
        answer_[a] = p[a];
      }
    } else {
      const auto ans = mech_->answer(p, answer_, *noise_);
      k = ans.k;
      given = ans.given;
    }
    has_[s] = given ? 1 : 0;
    k_[s] = k;
    last_k_ = given ? k : 0.0;
    alpha_[s] = static_cast<float>(kickstart_alpha(kp_.lambda, kp_.beta, k));
    for (int a = 0; a < m_; ++a) answers_(a, s) = given ? static_cast<float>(answer_[a]) : 0.0f;
  }
}

void PpoKickstart::on_episodes(std::span<const EpisodeRecord> finished) {
  for (const auto& e : finished) {
    ret_sum_ += e.ret;
    ++ret_n_;
    if (mech_ && kp_.decay_on == "episode") mech_->advance();
  }
}

void PpoKickstart::add_actor_grad(const nn::Mat& logp, const int* ids, int n, nn::Mat& dlogits) {
  if (!on_ || kp_.weight == 0.0) return;
  const double scale = kp_.weight / n;
  for (int j = 0; j < n; ++j) {
    const int s = ids[j];
    if (!has_[s]) continue;
    const PhiValue v =
        kickstart_phi(&logp(0, j), &answers_(0, s), m_, alpha_[s], scale, &dlogits(0, j));
    ++phi_n_;
    phi_on_ += v.active ? 1 : 0;
    phi_sum_ += v.phi;
  }
}

void PpoKickstart::end_iteration(TrainContext& ctx, std::int64_t step, std::int64_t episodes) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double eval = kNaN;
  if (ctx.eval_rounds() > eval_rounds_) {
    eval = ctx.last_eval().return_mean;
    eval_rounds_ = ctx.eval_rounds();
  }
  double alpha_sum = 0;
  std::int64_t answered = 0;
  for (std::size_t s = 0; s < has_.size(); ++s)
    if (has_[s]) {
      alpha_sum += alpha_[s];
      ++answered;
    }
  const double train_return = nan_if_none(ret_sum_, ret_n_);
  epoch_returns_.push_back(train_return);
  ctx.append_metrics(
      {{"step", static_cast<double>(step)},
       {"episodes", static_cast<double>(episodes)},
       {"train_return", train_return},
       {"eval_return", eval},
       {"k", on_ ? last_k_ : kNaN},
       {"alpha", on_ ? nan_if_none(alpha_sum, answered) : kNaN},
       {"phi_active", on_ ? nan_if_none(static_cast<double>(phi_on_), phi_n_) : kNaN},
       {"phi_mean", on_ ? nan_if_none(phi_sum_, phi_n_) : kNaN},
       {"queries", static_cast<double>(queries_)},
       {"epsilon_total", mech_ ? mech_->epsilon_total() : kNaN},
       {"delta_total", mech_ ? mech_->delta_total() : kNaN}});
  ret_sum_ = phi_sum_ = 0;
  ret_n_ = phi_n_ = phi_on_ = 0;
  if (mech_ && kp_.decay_on == "epoch") mech_->advance();
}

}  // namespace dprl::algos
