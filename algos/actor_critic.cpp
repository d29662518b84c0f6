#include "algos/actor_critic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "algos/gtd_learner.hpp"
#include "algos/private_noise.hpp"
#include "algos/tabular_policy.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "privacy/accountant.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/gaussian_mechanism.hpp"
#include "privacy/ledger.hpp"
#include "privacy/noise_source.hpp"

namespace dprl::algos {
namespace {

constexpr const char* kRelation = "replace";
constexpr const char* kUnit = "trajectory";

// The noise multipliers of one step's releases and the event a ledger charges per step.
struct StepPrivacy {
  bool actor = false, critic = false;
  double sigma = 0, z_actor = 0, z_critic = 0;
  std::int64_t per_step() const { return (actor ? 1 : 0) + (critic ? 1 : 0); }
  privacy::DpEvent event() const {
    if (actor && critic)
      return privacy::DpEvent::composed(
          {privacy::DpEvent::gaussian(z_actor), privacy::DpEvent::gaussian(z_critic)});
    return privacy::DpEvent::gaussian(actor ? z_actor : z_critic);
  }
  // the whole-run epsilon of the given releases under an accountant
  double epsilon(const std::string& accountant, std::int64_t actor_releases,
                 std::int64_t critic_releases, double delta) const {
    auto acc = privacy::make_accountant(accountant);
    if (actor_releases > 0) acc->compose(privacy::DpEvent::gaussian(z_actor), actor_releases);
    if (critic_releases > 0) acc->compose(privacy::DpEvent::gaussian(z_critic), critic_releases);
    return acc->epsilon(delta);
  }
};

StepPrivacy step_privacy(const ActorCriticParams& p, const FeatureMap& f, bool secure) {
  StepPrivacy s;
  s.actor = p.dp == "actor" || p.dp == "both";
  s.critic = p.dp == "critic" || p.dp == "both";
  if (!s.actor && !s.critic) return s;
  s.sigma = ActorCritic::paper_sigma(p.epsilon, p.delta);
  s.z_actor = ActorCritic::release_noise_multiplier(
      s.sigma, static_cast<std::size_t>(f.state_action_dim()), secure);
  s.z_critic = ActorCritic::release_noise_multiplier(
      s.sigma, static_cast<std::size_t>(f.state_dim()), secure);
  return s;
}

}  // namespace

double ActorCritic::paper_sigma(double epsilon, double delta) {
  return std::sqrt(2.0 * std::log(1.25 / delta)) / epsilon;
}

double ActorCritic::release_noise_multiplier(double sigma, std::size_t n, bool secure) {
  return secure ? sigma / (2.0 + std::sqrt(static_cast<double>(n)) * sigma *
                                     std::ldexp(1.0, -kReleaseGridBits))
                : sigma / 2.0;
}

ActorCritic::ActorCritic(const Params& p) : p_(p) {}
ActorCritic::~ActorCritic() = default;

void ActorCritic::check(const RunPlan& plan) {
  const EnvSpec& spec = plan.env.spec();
  auto features = make_feature_map(p_.features, spec.observation, spec.action);
  checked_ = true;
  const StepPrivacy sp = step_privacy(p_, *features, p_.noise == "os-entropy");
  if (sp.per_step() == 0 || p_.budget_epsilon <= 0) return;
  // a budget that cannot pay for one step is refused before any ledger file is created
  if (!privacy::Ledger(p_.budget_epsilon, p_.delta, p_.accountant).can_afford(sp.event(), 1))
    throw BudgetExceeded(fmt::format(
        "actor_critic: budget_epsilon = {} cannot afford a single step's releases at sigma {} "
        "(delta {})",
        p_.budget_epsilon, sp.sigma, p_.delta));
  std::optional<std::filesystem::path> file;
  if (!p_.ledger.empty())
    file = p_.ledger;
  else if (plan.run_dir)
    file = *plan.run_dir / privacy::Ledger::kFileName;
  ledger_ = std::make_unique<privacy::Ledger>(
      file ? privacy::Ledger::open_file(*file, p_.budget_epsilon, p_.delta, p_.accountant)
           : privacy::Ledger(p_.budget_epsilon, p_.delta, p_.accountant));
  ledger_->set_relation(kRelation, kUnit);
  if (!ledger_->can_afford(sp.event(), 1))
    throw BudgetExceeded(fmt::format(
        "actor_critic: the privacy budget in {} is already spent (epsilon {:.6g} of {} at delta "
        "{}): not one more step can be paid for",
        file ? file->string() : std::string("the ledger"), ledger_->spent_epsilon(),
        p_.budget_epsilon, p_.delta));
}

std::int64_t ActorCritic::train(TrainContext& ctx) {
  auto env = ctx.make_env();
  const EnvSpec& spec = env->spec();
  if (!checked_) check(RunPlan{*env, ctx.train(), ctx.seed(), ctx.run_dir()});
  checked_ = false;  // a second train() checks (and opens its ledger) again
  auto features = make_feature_map(p_.features, spec.observation, spec.action);
  env_id_ = spec.id;
  num_states_ = static_cast<int>(spec.observation.n);
  num_actions_ = static_cast<int>(spec.action.n);

  const StepPrivacy sp = step_privacy(p_, *features, p_.noise == "os-entropy");
  const bool priv = sp.per_step() > 0;
  std::unique_ptr<privacy::NoiseSource> noise;
  if (priv)
    noise = make_private_noise(p_.noise, ctx.seed(), 1,
                               {p_.epsilon, p_.delta, sp.sigma, p_.clip_norm}, "actor_critic");
  std::unique_ptr<privacy::Ledger> ledger = std::move(ledger_);
  if (ledger) ledger->set_noise_source(noise->name());
  const privacy::DpEvent step_event = priv ? sp.event() : privacy::DpEvent::gaussian(1.0);

  // the budget: steps are paid for in blocks, each charged (and durable) before its first release
  std::int64_t paid = 0, charged_steps = 0, charges = 0;
  bool stopped_by_budget = false;
  auto pay_for_step = [&]() {
    if (!ledger || paid > 0) return true;
    const std::int64_t n = ledger->affordable_count(step_event, p_.charge_block);
    if (n == 0) return false;
    ledger->charge(step_event, n, fmt::format("steps {}..{}", charged_steps, charged_steps + n));
    paid = n;
    charged_steps += n;
    ++charges;
    return true;
  };

  GtdActorCriticLearner agent(p_, *features, num_actions_, sp.actor, sp.critic, sp.sigma,
                              noise.get());
  agent.tap = tap_;
  // the paired twin: same seeds, no noise
  const bool twin_on = p_.trace_similarity && priv;
  std::unique_ptr<GtdActorCriticLearner> twin;
  std::unique_ptr<Env> twin_env;
  if (twin_on) {
    twin = std::make_unique<GtdActorCriticLearner>(p_, *features, num_actions_, false, false, 0.0,
                                                   nullptr);
    twin_env = ctx.make_env();
  }

  const std::size_t dim = spec.observation.dim();
  std::vector<float> obs(dim), next(dim), tobs(dim), tnext(dim);
  const std::int64_t max_steps = ctx.train().steps;
  std::int64_t step = 0;
  double cos_u_sum = 0, cos_u_sq = 0, cos_v_sum = 0, cos_v_sq = 0, ret_last = 0;
  int cos_n = 0;
  std::vector<double> returns;
  episodes_ = 0;

  auto run_episode = [&](GtdActorCriticLearner& l, Env& e, std::vector<float>& o,
                         std::vector<float>& o2, std::uint64_t k, std::int64_t* steps) {
    Rng rng(derive_seed(ctx.seed(), Domain::kAlgo, 1, k));
    e.reset(derive_seed(ctx.seed(), Domain::kEnvReset, 0, k), o);
    l.begin_episode();
    double ret = 0;
    std::int64_t len = 0;
    for (;;) {
      if (steps && !pay_for_step()) {
        stopped_by_budget = true;
        break;
      }
      const auto [a, rho] = l.act(o, rng);
      const StepResult r = e.step(static_cast<std::int64_t>(a), o2);
      l.update(o, a, rho, r.reward, r.terminated, o2);
      ret += r.reward;
      ++len;
      std::swap(o, o2);
      if (steps) {
        if (ledger) --paid;
        ++*steps;
        if (*steps >= max_steps) break;
      }
      if (r.terminated || r.truncated) break;
    }
    return std::pair{ret, len};
  };

  // greedy preferences u.psi(s, a) of the current actor, for evaluation and the checkpoint
  auto compute_preferences = [&] {
    preferences_.assign(static_cast<std::size_t>(num_states_) * num_actions_, 0.0);
    SparseFeatures psi;
    float o[1];
    for (int s = 0; s < num_states_; ++s) {
      o[0] = static_cast<float>(s);
      for (int a = 0; a < num_actions_; ++a) {
        features->state_action(std::span<const float>(o, 1), a, psi);
        preferences_[static_cast<std::size_t>(s) * num_actions_ + a] = psi.dot(agent.u);
      }
    }
  };

  std::int64_t diverged_episode = -1;
  std::int64_t eps_logged_at = 0;  // releases at the last epsilon value in metrics.csv
  auto finite = [](const std::vector<double>& x) {
    for (double e : x)
      if (!std::isfinite(e)) return false;
    return true;
  };
  while ((p_.episodes == 0 || episodes_ < p_.episodes) && step < max_steps && !stopped_by_budget &&
         diverged_episode < 0) {
    const std::uint64_t k = static_cast<std::uint64_t>(episodes_);
    const auto [ret, len] = run_episode(agent, *env, obs, next, k, &step);
    if (len == 0) break;  // the budget stopped training before the episode's first step
    // noise large enough to blow the weights up to inf / NaN ends training: reported, never hidden
    if (!finite(agent.u) || !finite(agent.v) || !finite(agent.w))
      diverged_episode = static_cast<std::int64_t>(k);
    double cu = NAN, cv = NAN;
    if (twin_on) {
      run_episode(*twin, *twin_env, tobs, tnext, k, nullptr);
      cu = cosine_similarity(agent.eu, twin->eu);
      cv = cosine_similarity(agent.ev, twin->ev);
      const double c = sp.actor ? cu : cv;  // the trace the noise enters
      if (std::isfinite(c)) {
        cos_u_sum += std::isfinite(cu) ? cu : 0;
        cos_u_sq += std::isfinite(cu) ? cu * cu : 0;
        cos_v_sum += std::isfinite(cv) ? cv : 0;
        cos_v_sq += std::isfinite(cv) ? cv * cv : 0;
        ++cos_n;
      }
    }
    ++episodes_;
    returns.push_back(ret);
    const std::int64_t releases = agent.actor_releases + agent.critic_releases;
    const bool last = (p_.episodes > 0 && episodes_ >= p_.episodes) || step >= max_steps ||
                      stopped_by_budget || diverged_episode >= 0;
    double eps_run = NAN;
    if (priv && releases > 0 &&
        (p_.accountant == "rdp" || last ||
         releases >= 2 * std::max<std::int64_t>(1, eps_logged_at))) {
      eps_run = sp.epsilon(p_.accountant, agent.actor_releases, agent.critic_releases, p_.delta);
      eps_logged_at = releases;
    }
    ctx.append_metrics({{"step", static_cast<double>(step)},
                        {"episode", static_cast<double>(episodes_)},
                        {"return", ret},
                        {"length", static_cast<double>(len)},
                        {"epsilon", eps_run},
                        {"cos_u", cu},
                        {"cos_v", cv}});
    ctx.progress().update(step, max_steps, episodes_, ret);
    if (ctx.eval_due(step)) {
      compute_preferences();
      auto pol = policy();
      ctx.evaluate(*pol, step, episodes_);
    }
  }
  compute_preferences();

  const std::size_t last = std::min<std::size_t>(100, returns.size());
  for (std::size_t i = returns.size() - last; i < returns.size(); ++i) ret_last += returns[i];
  double mean_all = 0;
  for (double r : returns) mean_all += r;
  extra_ = {{"train_return_mean", returns.empty() ? NAN : mean_all / returns.size()},
            {"train_return_last100", last ? ret_last / last : NAN}};
  if (twin_on && cos_n > 0) {
    const double mu = cos_u_sum / cos_n, mv = cos_v_sum / cos_n;
    extra_.push_back({"cos_u_mean", mu});
    extra_.push_back({"cos_u_var", cos_u_sq / cos_n - mu * mu});
    extra_.push_back({"cos_v_mean", mv});
    extra_.push_back({"cos_v_var", cos_v_sq / cos_n - mv * mv});
  }

  extra_.push_back({"diverged", diverged_episode >= 0 ? 1.0 : 0.0});
  if (diverged_episode >= 0)
    extra_.push_back({"diverged_episode", static_cast<double>(diverged_episode)});
  if (ledger) extra_.push_back({"stopped_by_budget", stopped_by_budget ? 1.0 : 0.0});
  privacy_.reset();
  if (!priv) return step;

  const std::int64_t releases = agent.actor_releases + agent.critic_releases;
  PrivacyReport r;
  r.epsilon = releases > 0
                  ? sp.epsilon(p_.accountant, agent.actor_releases, agent.critic_releases, p_.delta)
                  : 0.0;
  r.delta = p_.delta;
  r.accountant = p_.accountant;
  r.neighbouring = kRelation;
  r.unit = kUnit;
  r.sensitivity = p_.noise == "os-entropy"
                      ? "L2 2C + sqrt(n) g per released n-element vector (norm exactly C; "
                        "snapped to the noise grid g <= sigma C 2^-12)"
                      : "L2 2C per released vector (every release has norm exactly C)";
  if (sp.actor) r.covers.push_back("the noised actor gradients (not written)");
  if (sp.critic) r.covers.push_back("the noised critic directions (not written)");
  r.formal = false;
  r.noise_source = noise->name();
  r.reproducible_noise = p_.noise == "seeded";
  nlohmann::ordered_json d;
  d["mechanism"] = fmt::format("gaussian on the {} update, paper 001 Algorithms 2-4", p_.dp);
  d["not_covered"] = {"policy.json", "metrics.csv", "summary.json train returns and cosines",
                      "final evaluation"};
  d["why_not_formal"] =
      "the updates multiply the noised trace by the raw TD error and importance ratio, and the "
      "critic (and the actor under DP-Critic) use raw data, so no published output is "
      "post-processing of the releases" +
      std::string(p_.clip == "median" ? "; clip = median makes C data-dependent" : "") +
      std::string(p_.noise == "seeded" ? "; the seeded noise can be regenerated" : "");
  d["sigma"] = sp.sigma;
  if (sp.actor) d["noise_multiplier_actor"] = sp.z_actor;
  if (sp.critic) d["noise_multiplier_critic"] = sp.z_critic;
  d["per_update_epsilon_paper"] = p_.epsilon;
  d["per_update_delta"] = p_.delta;
  d["per_update_epsilon_exact"] =
      privacy::gaussian_epsilon(sp.actor ? sp.z_actor : sp.z_critic, p_.delta);
  d["classical_calibration_valid"] = p_.epsilon < 1.0;
  d["releases"] = releases;
  d["actor_releases"] = agent.actor_releases;
  d["critic_releases"] = agent.critic_releases;
  d["clip"] = p_.clip;
  if (agent.actor_releases)
    d["mean_c_actor"] = agent.c_actor_sum / static_cast<double>(agent.actor_releases);
  if (agent.critic_releases)
    d["mean_c_critic"] = agent.c_critic_sum / static_cast<double>(agent.critic_releases);
  if (ledger) {
    d["budget_epsilon"] = p_.budget_epsilon;
    d["stopped_by_budget"] = stopped_by_budget;
    d["ledger"] = ledger->file() ? ledger->file()->string() : std::string("in memory");
    d["ledger_spent_epsilon"] = ledger->spent_epsilon();
    d["ledger_charges_this_run"] = charges;
    d["charged_steps"] = charged_steps;
    d["charged_steps_unused"] = paid;
  }
  r.details_json = d.dump();
  privacy_ = r;
  return step;
}

std::unique_ptr<Policy> ActorCritic::policy() const {
  return std::make_unique<TabularGreedyPolicy>(env_id_, num_states_, num_actions_, preferences_,
                                               false, p_.explore);
}

void ActorCritic::save_policy(const std::filesystem::path& file) const {
  TabularGreedyPolicy(env_id_, num_states_, num_actions_, preferences_, false, p_.explore)
      .save(file);
}

}  // namespace dprl::algos
