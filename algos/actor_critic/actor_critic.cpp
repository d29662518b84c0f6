#include "algos/actor_critic/actor_critic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "algos/actor_critic/gtd_learner.hpp"
#include "algos/core/private_noise.hpp"
#include "algos/core/tabular_policy.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "engine/state_io.hpp"
#include "privacy/accountant.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/gaussian_mechanism.hpp"
#include "privacy/ledger.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/secure_release.hpp"

namespace dprl::algos {
namespace {

constexpr NeighbouringRelation kRelation = NeighbouringRelation::kReplaceOne;
constexpr const char* kUnit = "trajectory";

}  // namespace

// Named rather than file-local: ActorCritic::Run holds one.
namespace actor_critic_run {

// The noise multiplier of one step's releases and the event a ledger charges per step. Every
// release has L2 sensitivity 2C and noise sd sigma C (a secure source widens the noise to cover its
// grid, privacy/secure_release.hpp), so its noise multiplier is z = sigma / 2.
struct StepPrivacy {
  bool actor = false, critic = false;
  double sigma = 0, z = 0;
  std::int64_t per_step() const { return (actor ? 1 : 0) + (critic ? 1 : 0); }
  privacy::DpEvent event() const {
    if (actor && critic)
      return privacy::DpEvent::composed(
          {privacy::DpEvent::gaussian(z), privacy::DpEvent::gaussian(z)});
    return privacy::DpEvent::gaussian(z);
  }
  // the whole-run epsilon of the given releases under an accountant
  double epsilon(const std::string& accountant, std::int64_t actor_releases,
                 std::int64_t critic_releases, double delta) const {
    auto acc = privacy::make_accountant(accountant);
    if (actor_releases > 0) acc->compose(privacy::DpEvent::gaussian(z), actor_releases);
    if (critic_releases > 0) acc->compose(privacy::DpEvent::gaussian(z), critic_releases);
    return acc->epsilon(delta);
  }
};

}  // namespace actor_critic_run

namespace {

actor_critic_run::StepPrivacy step_privacy(const ActorCriticParams& p, const FeatureMap& f,
                                           bool secure) {
  actor_critic_run::StepPrivacy s;
  s.actor = p.dp == "actor" || p.dp == "both";
  s.critic = p.dp == "critic" || p.dp == "both";
  if (!s.actor && !s.critic) return s;
  s.sigma = ActorCritic::paper_sigma(p.epsilon, p.delta);
  s.z = s.sigma / 2.0;
  if (!secure) return s;
  // whether the snapped release can cover its grid depends on sigma and the vector's length, not
  // on C: refuse before training what a release would refuse during it
  for (const int n : {s.actor ? f.state_action_dim() : 0, s.critic ? f.state_dim() : 0}) {
    if (n == 0) continue;
    try {
      privacy::gaussian_release_plan(s.sigma, 2.0, static_cast<std::size_t>(n), true);
    } catch (const ParamError& e) {
      throw ParamError(fmt::format("actor_critic: epsilon = {}: {}", p.epsilon, e.what()));
    }
  }
  return s;
}

}  // namespace

double ActorCritic::paper_sigma(double epsilon, double delta) {
  return std::sqrt(2.0 * std::log(1.25 / delta)) / epsilon;
}

ActorCritic::ActorCritic(const Params& p) : p_(p) {}
ActorCritic::~ActorCritic() = default;

void ActorCritic::check(const RunPlan& plan) {
  const EnvSpec& spec = plan.env.spec();
  auto features = make_feature_map(p_.features, spec.observation, spec.action);
  checked_ = true;
  const actor_critic_run::StepPrivacy sp = step_privacy(p_, *features, p_.noise == "os-entropy");
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
  ledger_in_run_dir_ = p_.ledger.empty() && plan.run_dir;
  // a resumed run may find its budget spent by charges its killed process made for it
  if (!plan.resuming && !ledger_->can_afford(sp.event(), 1))
    throw BudgetExceeded(fmt::format(
        "actor_critic: the privacy budget in {} is already spent (epsilon {:.6g} of {} at delta "
        "{}): not one more step can be paid for",
        file ? file->string() : std::string("the ledger"), ledger_->spent_epsilon(),
        p_.budget_epsilon, p_.delta));
}

// Named rather than file-local: ActorCritic::Run holds one.
namespace actor_critic_run {

// The budget: steps are paid for in blocks of charge_block, each charged (and durable) before
// its first release; without a ledger every step is free.
struct StepBudget {
  privacy::Ledger* ledger = nullptr;
  privacy::DpEvent event;
  std::int64_t block = 0;
  std::int64_t paid = 0, charged_steps = 0, charges = 0;
  // a resumed run first reuses the charges its killed process made for it (resume_budget)
  bool pay_for_step() {
    if (!ledger || paid > 0) return true;
    const privacy::LedgerEntry* reused = ledger->next_reusable();
    const std::int64_t n = reused ? reused->count : ledger->affordable_count(event, block);
    if (n == 0) return false;
    if (n < 0 || n > block)
      throw DataError(fmt::format("{}: charge '{}' is not a block of this run",
                                  ledger->file() ? ledger->file()->string() : "the ledger",
                                  reused->label));
    ledger->charge_or_reuse(event, n, label(n));
    paid = n;
    charged_steps += n;
    ++charges;
    return true;
  }
  std::string label(std::int64_t n) const {
    return fmt::format("steps {}..{}", charged_steps, charged_steps + n);
  }
};

}  // namespace actor_critic_run

namespace {

bool all_finite(const std::vector<double>& x) {
  for (double e : x)
    if (!std::isfinite(e)) return false;
  return true;
}

}  // namespace

// What one train() call carries from episode to episode: the env and features, the privacy
// calibration, noise and budget, the learner and its non-private twin, and the running figures.
struct ActorCritic::Run {
  Run(TrainContext& ctx, const ActorCriticParams& p, std::unique_ptr<Env> e,
      std::unique_ptr<FeatureMap> f, std::unique_ptr<privacy::Ledger> l)
      : ctx(ctx),
        env(std::move(e)),
        features(std::move(f)),
        sp(step_privacy(p, *features, p.noise == "os-entropy")),
        priv(sp.per_step() > 0),
        ledger(std::move(l)),
        budget{ledger.get(), priv ? sp.event() : privacy::DpEvent::gaussian(1.0), p.charge_block},
        max_steps(ctx.train().steps) {}

  // One episode of learner l in env e from its obs buffers o, o2, seeded by episode k. counted:
  // the steps are paid for and counted against train.steps (the twin's are not). Returns the
  // return and length.
  std::pair<double, std::int64_t> episode(GtdActorCriticLearner& l, Env& e, std::vector<float>& o,
                                          std::vector<float>& o2, std::uint64_t k, bool counted);

  TrainContext& ctx;
  std::unique_ptr<Env> env;
  std::unique_ptr<FeatureMap> features;
  const actor_critic_run::StepPrivacy sp;
  const bool priv;
  std::unique_ptr<privacy::NoiseSource> noise;
  std::unique_ptr<privacy::Ledger> ledger;
  actor_critic_run::StepBudget budget;
  bool stopped_by_budget = false;
  std::unique_ptr<GtdActorCriticLearner> agent, twin;  // twin: same seeds, no noise
  std::unique_ptr<Env> twin_env;
  std::vector<float> obs, next, tobs, tnext;
  const std::int64_t max_steps;
  std::int64_t step = 0;
  // cosine similarities of the traces to the twin's (trace_similarity)
  double cos_u_sum = 0, cos_u_sq = 0, cos_v_sum = 0, cos_v_sq = 0;
  int cos_n = 0;
  std::vector<double> returns;
  std::int64_t diverged_episode = -1;
  std::int64_t eps_logged_at = 0;  // releases at the last epsilon value in metrics.csv
};

std::pair<double, std::int64_t> ActorCritic::Run::episode(GtdActorCriticLearner& l, Env& e,
                                                          std::vector<float>& o,
                                                          std::vector<float>& o2, std::uint64_t k,
                                                          bool counted) {
  Rng rng(derive_seed(ctx.seed(), Domain::kAlgo, 1, k));
  e.reset(derive_seed(ctx.seed(), Domain::kEnvReset, 0, k), o);
  l.begin_episode();
  double ret = 0;
  std::int64_t len = 0;
  for (;;) {
    if (counted && !budget.pay_for_step()) {
      stopped_by_budget = true;
      break;
    }
    const auto [a, rho] = l.act(o, rng);
    const StepResult r = e.step(static_cast<std::int64_t>(a), o2);
    l.update(o, a, rho, r.reward, r.terminated, o2);
    ret += r.reward;
    ++len;
    std::swap(o, o2);
    if (counted) {
      if (ledger) --budget.paid;
      ++step;
      if (step >= max_steps) break;
    }
    if (r.terminated || r.truncated) break;
  }
  return std::pair{ret, len};
}

TrainSteps ActorCritic::train(TrainContext& ctx) {
  auto env = ctx.make_env();
  const EnvSpec& spec = env->spec();
  if (!checked_) check(RunPlan{*env, ctx.train(), ctx.seed(), ctx.run_dir()});
  checked_ = false;  // a second train() checks (and opens its ledger) again
  auto features = make_feature_map(p_.features, spec.observation, spec.action);
  env_id_ = spec.id;
  num_states_ = static_cast<int>(spec.observation.n);
  num_actions_ = static_cast<int>(spec.action.n);
  Run r(ctx, p_, std::move(env), std::move(features), std::move(ledger_));
  if (r.priv)
    r.noise = make_private_noise(p_.noise, ctx.seed(), 1,
                                 {p_.epsilon, p_.delta, r.sp.sigma, p_.clip_norm}, "actor_critic");
  if (r.ledger) r.ledger->set_noise_source(r.noise->name());
  r.agent = std::make_unique<GtdActorCriticLearner>(p_, *r.features, num_actions_, r.sp.actor,
                                                    r.sp.critic, r.sp.sigma, r.noise.get());
  r.agent->tap = tap_;
  if (p_.trace_similarity && r.priv) {
    r.twin = std::make_unique<GtdActorCriticLearner>(p_, *r.features, num_actions_, false, false,
                                                     0.0, nullptr);
    r.twin_env = ctx.make_env();
  }
  const std::size_t dim = spec.observation.dim();
  for (auto* o : {&r.obs, &r.next, &r.tobs, &r.tnext}) o->resize(dim);
  episodes_ = 0;
  std::uint64_t ledger_entries = 0;
  const TrainContext::SyncFn sync = [&](StateIo& io) { sync_run(r, io, ledger_entries); };
  if (ctx.resume(sync)) {
    // a refused fall-back (resume_budget) must leave metrics.csv as the killed run wrote it, not
    // the shorter copy the checkpoint holds
    if (r.priv && p_.noise != "seeded" && ctx.resumed_from_previous())
      ctx.hold_metrics_until_checkpoints();
    resume_budget(r, ctx, ledger_entries);
  }
  else if (r.ledger)
    ctx.save_checkpoint(0, sync);  // the ledger position before the run's first charge
  while ((p_.episodes == 0 || episodes_ < p_.episodes) && r.step < r.max_steps &&
         !r.stopped_by_budget && r.diverged_episode < 0) {
    const std::uint64_t k = static_cast<std::uint64_t>(episodes_);
    const auto [ret, len] = r.episode(*r.agent, *r.env, r.obs, r.next, k, true);
    if (len == 0) break;  // the budget stopped training before the episode's first step
    // noise large enough to blow the weights up to inf / NaN ends training: reported, never hidden
    if (!all_finite(r.agent->u) || !all_finite(r.agent->v) || !all_finite(r.agent->w))
      r.diverged_episode = static_cast<std::int64_t>(k);
    const auto [cu, cv] = twin_similarity(r, k);
    ++episodes_;
    r.returns.push_back(ret);
    log_episode(r, ret, len, cu, cv);
    if (ctx.checkpoint_due(r.step)) ctx.save_checkpoint(r.step, sync);
  }
  compute_preferences(*r.features, r.agent->u);
  summarise(r);
  privacy_.reset();
  if (r.priv) privacy_ = privacy_record(r);
  return {r.step, r.step};  // one TD update per env step
}

namespace {

// a learner's state between episodes (the traces restart at begin_episode; pi is recomputed
// from the preferences, bit for bit, when its cache is cold)
void sync_learner(GtdActorCriticLearner& l, StateIo& io) {
  io(l.v, true);
  io(l.w, true);
  io(l.u, true);
  io(l.sparse);
  constexpr std::int64_t kMax = std::int64_t{1} << 62;
  io.bounded(l.actor_releases, std::int64_t{0}, kMax, "actor releases");
  io.bounded(l.critic_releases, std::int64_t{0}, kMax, "critic releases");
  io(l.c_actor_sum);
  io(l.c_critic_sum);
  if (io.loading()) l.pi_cached = false;
}

}  // namespace

void ActorCritic::sync_run(Run& r, StateIo& io, std::uint64_t& ledger_entries) {
  constexpr std::int64_t kMax = std::int64_t{1} << 62;
  io.section(r.twin ? "actor_critic_twin" : "actor_critic");
  sync_learner(*r.agent, io);
  if (r.twin) sync_learner(*r.twin, io);
  io.bounded(r.step, std::int64_t{0}, r.max_steps, "step");
  io.bounded(episodes_, std::int64_t{0}, kMax, "episodes");
  io(r.returns);
  io(r.cos_u_sum);
  io(r.cos_u_sq);
  io(r.cos_v_sum);
  io(r.cos_v_sq);
  io.bounded(r.cos_n, 0, std::numeric_limits<int>::max() - 1, "cosine count");
  io.bounded(r.diverged_episode, std::int64_t{-1}, kMax, "diverged episode");
  io.bounded(r.eps_logged_at, std::int64_t{0}, kMax, "releases at the last epsilon");
  io(r.stopped_by_budget);
  actor_critic_run::StepBudget& b = r.budget;
  io.bounded(b.paid, std::int64_t{0}, b.block, "steps paid for");
  io.bounded(b.charged_steps, std::int64_t{0}, kMax, "charged steps");
  io.bounded(b.charges, std::int64_t{0}, kMax, "charges");
  ledger_entries = r.ledger ? r.ledger->entries().size() : 0;
  io.bounded(ledger_entries, std::uint64_t{0}, std::uint64_t{1} << 40, "ledger charges");
  bool noised = r.noise != nullptr;
  io(noised);
  if (noised != (r.noise != nullptr)) throw DataError("checkpoint: of a run with other noise");
  if (r.noise) r.noise->sync_state(io);
}

void ActorCritic::resume_budget(Run& r, const TrainContext& ctx,
                                std::uint64_t ledger_entries) const {
  // After a fall-back to checkpoint.prev.bin with fresh noise the episodes after it are drawn
  // again with other noise, while the lost newest checkpoint's rows (and epsilon) may have been
  // published; the record's epsilon counts the releases of this process only, so it would miss
  // them. Refused, as selective DP-SGD does.
  if (r.priv && p_.noise != "seeded" && ctx.resumed_from_previous())
    throw DataError(
        "actor_critic: the newest checkpoint is missing or damaged and the noise is not seeded, so "
        "the run cannot continue from checkpoint.prev.bin without losing count of its releases");
  if (!r.ledger) return;
  r.ledger->reuse_from(static_cast<std::size_t>(ledger_entries));
  // The charges after the checkpoint paid for releases the killed process never wrote out. Not
  // when the ledger is shared with other runs (their charges interleave).
  const bool reuse = ledger_in_run_dir_;
  if (!reuse) r.ledger->reuse_from(r.ledger->entries().size());
}

std::pair<double, double> ActorCritic::twin_similarity(Run& r, std::uint64_t k) {
  if (!r.twin) return {NAN, NAN};
  r.episode(*r.twin, *r.twin_env, r.tobs, r.tnext, k, false);
  const double cu = cosine_similarity(r.agent->eu, r.twin->eu);
  const double cv = cosine_similarity(r.agent->ev, r.twin->ev);
  const double c = r.sp.actor ? cu : cv;  // the trace the noise enters
  if (std::isfinite(c)) {
    r.cos_u_sum += std::isfinite(cu) ? cu : 0;
    r.cos_u_sq += std::isfinite(cu) ? cu * cu : 0;
    r.cos_v_sum += std::isfinite(cv) ? cv : 0;
    r.cos_v_sq += std::isfinite(cv) ? cv * cv : 0;
    ++r.cos_n;
  }
  return {cu, cv};
}

void ActorCritic::log_episode(Run& r, double ret, std::int64_t len, double cu, double cv) {
  const GtdActorCriticLearner& agent = *r.agent;
  const std::int64_t releases = agent.actor_releases + agent.critic_releases;
  const bool last = (p_.episodes > 0 && episodes_ >= p_.episodes) || r.step >= r.max_steps ||
                    r.stopped_by_budget || r.diverged_episode >= 0;
  double eps_run = NAN;
  if (r.priv && releases > 0 &&
      (p_.accountant == "rdp" || last ||
       releases >= 2 * std::max<std::int64_t>(1, r.eps_logged_at))) {
    eps_run = r.sp.epsilon(p_.accountant, agent.actor_releases, agent.critic_releases, p_.delta);
    r.eps_logged_at = releases;
  }
  TrainContext& ctx = r.ctx;
  ctx.append_metrics({{"step", static_cast<double>(r.step)},
                      {"episode", static_cast<double>(episodes_)},
                      {"return", ret},
                      {"length", static_cast<double>(len)},
                      {"epsilon", eps_run},
                      {"cos_u", cu},
                      {"cos_v", cv}});
  ctx.progress().update(r.step, r.max_steps, episodes_, ret);
  if (ctx.eval_due(r.step)) {
    compute_preferences(*r.features, agent.u);
    auto pol = policy();
    ctx.evaluate(*pol, r.step, episodes_);
  }
}

// greedy preferences u.psi(s, a) of the current actor, for evaluation and the saved policy
void ActorCritic::compute_preferences(const FeatureMap& features, const std::vector<double>& u) {
  preferences_.assign(static_cast<std::size_t>(num_states_) * num_actions_, 0.0);
  SparseFeatures psi;
  float o[1];
  for (int s = 0; s < num_states_; ++s) {
    o[0] = static_cast<float>(s);
    for (int a = 0; a < num_actions_; ++a) {
      features.state_action(std::span<const float>(o, 1), a, psi);
      preferences_[static_cast<std::size_t>(s) * num_actions_ + a] = psi.dot(u);
    }
  }
}

void ActorCritic::summarise(const Run& r) {
  const std::vector<double>& returns = r.returns;
  double ret_last = 0;
  const std::size_t last = std::min<std::size_t>(100, returns.size());
  for (std::size_t i = returns.size() - last; i < returns.size(); ++i) ret_last += returns[i];
  double mean_all = 0;
  for (double x : returns) mean_all += x;
  extra_ = {{"train_return_mean", returns.empty() ? NAN : mean_all / returns.size()},
            {"train_return_last100", last ? ret_last / last : NAN}};
  if (r.twin && r.cos_n > 0) {
    const double mu = r.cos_u_sum / r.cos_n, mv = r.cos_v_sum / r.cos_n;
    extra_.push_back({"cos_u_mean", mu});
    extra_.push_back({"cos_u_var", r.cos_u_sq / r.cos_n - mu * mu});
    extra_.push_back({"cos_v_mean", mv});
    extra_.push_back({"cos_v_var", r.cos_v_sq / r.cos_n - mv * mv});
  }
  extra_.push_back({"diverged", r.diverged_episode >= 0 ? 1.0 : 0.0});
  if (r.diverged_episode >= 0)
    extra_.push_back({"diverged_episode", static_cast<double>(r.diverged_episode)});
  if (r.ledger) extra_.push_back({"stopped_by_budget", r.stopped_by_budget ? 1.0 : 0.0});
}

PrivacyReport ActorCritic::privacy_record(const Run& r) const {
  const GtdActorCriticLearner& agent = *r.agent;
  const actor_critic_run::StepPrivacy& sp = r.sp;
  const std::int64_t releases = agent.actor_releases + agent.critic_releases;
  PrivacyReport rep;
  rep.epsilon = releases > 0 ? sp.epsilon(p_.accountant, agent.actor_releases,
                                          agent.critic_releases, p_.delta)
                             : 0.0;
  // the table sampler's distance: every secure release draws from it (VaryingGaussianRelease)
  const bool secure = p_.noise == "os-entropy";
  const auto dim = [](int n) { return static_cast<std::size_t>(n); };
  rep.sampler_delta = privacy::sampler_delta(
      rep.epsilon,
      static_cast<double>(agent.actor_releases) *
              privacy::repeated_release_tv(dim(r.features->state_action_dim()), secure) +
          static_cast<double>(agent.critic_releases) *
              privacy::repeated_release_tv(dim(r.features->state_dim()), secure));
  rep.delta = privacy::record_delta(p_.delta, rep.sampler_delta);
  rep.accountant = p_.accountant;
  rep.neighbouring = kRelation;
  rep.unit = kUnit;
  rep.sensitivity = p_.noise == "os-entropy"
                        ? "L2 2C + sqrt(n) g per released n-element vector (norm exactly C, "
                          "snapped to the sampler's grid g); the noise sd sigma C (1 + sqrt(n) g "
                          "/ 2C) keeps the multiplier sigma / 2"
                        : "L2 2C per released vector (every release has norm exactly C)";
  if (sp.actor) rep.covers.push_back("the noised actor gradients (not written)");
  if (sp.critic) rep.covers.push_back("the noised critic directions (not written)");
  rep.formal = false;
  rep.noise_source = r.noise->name();
  rep.reproducible_noise = p_.noise == "seeded";
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
  if (sp.actor) d["noise_multiplier_actor"] = sp.z;
  if (sp.critic) d["noise_multiplier_critic"] = sp.z;
  d["per_update_epsilon_paper"] = p_.epsilon;
  d["per_update_delta"] = p_.delta;
  d["per_update_epsilon_exact"] = privacy::gaussian_epsilon(sp.z, p_.delta);
  d["classical_calibration_valid"] = p_.epsilon < 1.0;
  d["releases"] = releases;
  d["actor_releases"] = agent.actor_releases;
  d["critic_releases"] = agent.critic_releases;
  d["clip"] = p_.clip;
  if (agent.actor_releases)
    d["mean_c_actor"] = agent.c_actor_sum / static_cast<double>(agent.actor_releases);
  if (agent.critic_releases)
    d["mean_c_critic"] = agent.c_critic_sum / static_cast<double>(agent.critic_releases);
  if (r.ledger) {
    const actor_critic_run::StepBudget& b = r.budget;
    d["budget_epsilon"] = p_.budget_epsilon;
    d["stopped_by_budget"] = r.stopped_by_budget;
    d["ledger"] = r.ledger->file() ? r.ledger->file()->string() : std::string("in memory");
    d["ledger_spent_epsilon"] = r.ledger->spent_epsilon();
    d["ledger_charges_this_run"] = b.charges;
    d["charged_steps"] = b.charged_steps;
    d["charged_steps_unused"] = b.paid;
  }
  rep.details_json = d.dump();
  return rep;
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
