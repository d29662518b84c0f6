#include "algos/actor_critic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "algos/gtd_learner.hpp"
#include "algos/tabular_policy.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "privacy/accountant.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/gaussian_mechanism.hpp"
#include "privacy/ledger.hpp"
#include "privacy/noise_source.hpp"

namespace dprl::algos {

double ActorCritic::paper_sigma(double epsilon, double delta) {
  return std::sqrt(2.0 * std::log(1.25 / delta)) / epsilon;
}

ActorCritic::~ActorCritic() = default;

std::int64_t ActorCritic::train(TrainContext& ctx) {
  auto env = ctx.make_env();
  const EnvSpec& spec = env->spec();
  auto features = make_feature_map(p_.features, spec.observation, spec.action);
  env_id_ = spec.id;
  num_states_ = static_cast<int>(spec.observation.n);
  num_actions_ = static_cast<int>(spec.action.n);

  const bool dp_actor = p_.dp == "actor" || p_.dp == "both";
  const bool dp_critic = p_.dp == "critic" || p_.dp == "both";
  const bool priv = dp_actor || dp_critic;
  const double sigma = priv ? paper_sigma(p_.epsilon, p_.delta) : 0.0;
  std::unique_ptr<privacy::NoiseSource> noise;
  if (priv)
    noise = p_.noise == "seeded" ? privacy::make_seeded_noise(ctx.seed(), 0)
                                 : privacy::make_os_entropy_noise();

  // the budget: every release is the same Gaussian event, so the number of releases the budget
  // affords is found once (bisection on the ledger's own accounting); training stops before the
  // first release past it, and each episode's releases are charged to the ledger
  std::optional<privacy::Ledger> ledger;
  std::int64_t affordable = std::numeric_limits<std::int64_t>::max();
  const auto event = privacy::DpEvent::gaussian(priv ? sigma : 1.0);
  if (priv && p_.budget_epsilon > 0) {
    ledger.emplace(p_.budget_epsilon, p_.delta, p_.accountant);
    ledger->set_noise_source(noise->name());
    if (!ledger->can_afford(event, 1))
      throw BudgetExceeded(fmt::format(
          "actor_critic: budget_epsilon = {} cannot afford a single release at sigma {} (delta {})",
          p_.budget_epsilon, sigma, p_.delta));
    std::int64_t lo = 1, hi = 2;
    while (ledger->can_afford(event, hi) && hi < (std::int64_t{1} << 40)) {
      lo = hi;
      hi *= 2;
    }
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      (ledger->can_afford(event, mid) ? lo : hi) = mid;
    }
    affordable = lo;
  }
  const std::int64_t per_step = (dp_actor ? 1 : 0) + (dp_critic ? 1 : 0);
  bool stopped_by_budget = false;

  GtdActorCriticLearner agent(p_, *features, num_actions_, dp_actor, dp_critic, sigma, noise.get());
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
      if (steps && l.actor_releases + l.critic_releases + per_step > affordable) {
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

  std::int64_t charged = 0;
  std::int64_t diverged_episode = -1;
  while ((p_.episodes == 0 || episodes_ < p_.episodes) && step < max_steps && !stopped_by_budget &&
         diverged_episode < 0) {
    const std::uint64_t k = static_cast<std::uint64_t>(episodes_);
    const auto [ret, len] = run_episode(agent, *env, obs, next, k, &step);
    if (ledger) {
      const std::int64_t released = agent.actor_releases + agent.critic_releases - charged;
      if (released > 0) ledger->charge(event, released, fmt::format("episode {}", k));
      charged += released;
    }
    if (len == 0) break;  // the budget stopped training before the episode's first step
    // noise large enough to blow the weights up to inf / NaN ends training: reported, never hidden
    auto finite = [](const std::vector<double>& x) {
      for (double e : x)
        if (!std::isfinite(e)) return false;
      return true;
    };
    if (!finite(agent.u) || !finite(agent.v) || !finite(agent.w)) {
      diverged_episode = static_cast<std::int64_t>(k);
    }
    double cu = NAN, cv = NAN;
    if (twin_on) {
      run_episode(*twin, *twin_env, tobs, tnext, k, nullptr);
      cu = cosine_similarity(agent.eu, twin->eu);
      cv = cosine_similarity(agent.ev, twin->ev);
      const double c = dp_actor ? cu : cv;  // the trace the noise enters
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
    double eps_run = NAN;
    if (priv && releases > 0) {
      auto acc = privacy::make_accountant("rdp");
      acc->compose(privacy::DpEvent::gaussian(sigma), releases);
      eps_run = acc->epsilon(p_.delta);
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
  if (ledger) {
    ctx.write_file(privacy::Ledger::kFileName, ledger->to_json());
    extra_.push_back({"stopped_by_budget", stopped_by_budget ? 1.0 : 0.0});
  }
  if (priv) {
    const std::int64_t releases = agent.actor_releases + agent.critic_releases;
    auto acc = privacy::make_accountant(p_.accountant);
    acc->compose(privacy::DpEvent::gaussian(sigma), std::max<std::int64_t>(releases, 1));
    PrivacyReport r;
    r.epsilon = acc->epsilon(p_.delta);
    r.delta = p_.delta;
    r.accountant = acc->name();
    r.noise_source = noise->name();
    const bool formal = p_.clip == "fixed";
    nlohmann::ordered_json d;
    d["mechanism"] = fmt::format("gaussian on the {} update", p_.dp);
    d["neighbouring"] =
        "add/remove one individual's data, which may influence every update (conservative)";
    d["sigma"] = sigma;
    d["per_update_epsilon_paper"] = p_.epsilon;
    d["per_update_delta"] = p_.delta;
    d["per_update_epsilon_exact"] = privacy::gaussian_epsilon(sigma, p_.delta);
    d["classical_calibration_valid"] = p_.epsilon < 1.0;
    d["releases"] = releases;
    d["actor_releases"] = agent.actor_releases;
    d["critic_releases"] = agent.critic_releases;
    d["clip"] = p_.clip;
    if (agent.actor_releases)
      d["mean_c_actor"] = agent.c_actor_sum / static_cast<double>(agent.actor_releases);
    if (agent.critic_releases)
      d["mean_c_critic"] = agent.c_critic_sum / static_cast<double>(agent.critic_releases);
    d["formal"] = formal;
    if (ledger) {
      d["budget_epsilon"] = p_.budget_epsilon;
      d["stopped_by_budget"] = stopped_by_budget;
    }
    if (!formal)
      d["note"] =
          "clip = median makes C data-dependent: the whole-run figure assumes sensitivity C "
          "but is not a formal DP guarantee";
    r.details_json = d.dump();
    privacy_ = r;
  }
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
