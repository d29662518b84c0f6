// User-level DP-SGD planning for the offline learners: the configuration from the dataset, the
// noise scale of the release, the step count the budget affords, the ledger, block charges and
// the guarantee record (see offline_learner.hpp and privacy/user_dp_sgd.hpp).
#include "algos/offline/offline_dp.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/error.hpp"
#include "privacy/calibration.hpp"
#include "privacy/secure_release.hpp"

namespace dprl::algos {

namespace {

// The dataset's privacy unit: metadata "privacy_unit" when the collector wrote one, else "user".
std::string dataset_unit(const Dataset& ds) {
  const std::string& meta = ds.info().metadata_json;
  if (!meta.empty()) {
    const auto j = nlohmann::json::parse(meta, nullptr, false);
    if (j.is_object() && j.contains("privacy_unit") && j["privacy_unit"].is_string())
      return j["privacy_unit"].get<std::string>();
  }
  return "user";
}

constexpr std::int64_t kMaxSteps = std::int64_t{1} << 40;

}  // namespace

void OfflineLearner::plan_dp(const RunPlan& plan) {
  auto run = std::make_unique<DpRun>();
  run->cfg.noise_multiplier = dp_.noise_multiplier;
  run->cfg.clip_norm = dp_.clip_norm;
  run->cfg.expected_batch = common_.batch_size;
  // m of q = b / m: the configured public figure, or the dataset's count declared public
  run->cfg.num_users = dp_.public_users > 0
                           ? dp_.public_users
                           : static_cast<std::int64_t>(plan.dataset->users().size());
  run->cfg.contribution = dp_.contribution;
  run->cfg.float_sums = dp_.sum == "auto";
  run->cfg.validate();
  // the rounding allowance of the sum (user_dp_sgd.hpp) holds for at most m + 1 sampled users:
  // a public M is a public upper bound on the dataset's users
  const auto data_users = static_cast<std::int64_t>(plan.dataset->users().size());
  if (dp_.public_users > 0 && data_users > dp_.public_users)
    throw ParamError(fmt::format(
        "{}.public_users = {} is below the dataset's {} users: M is the public upper bound on the "
        "number of users (q = b / M)",
        name_, dp_.public_users, data_users));
  run->unit = dataset_unit(*plan.dataset);
  // the release's noise: z C, or with the secure sampler enough more to cover its grid snapping
  const EnvSpec& spec = plan.env.spec();
  setup(static_cast<int>(spec.observation.dim()), static_cast<int>(spec.action.n), plan.seed);
  std::vector<privacy::DpNetGrad> nets;
  for (const auto& t : trained()) nets.push_back({&t.net->shape(), t.cache, nullptr});
  run->noised_values = privacy::noised_values(nets);
  run->secure = dp_.noise == "os-entropy";
  run->cfg.discrete = run->secure;  // exact discrete Gaussian noise: its own proven bound
  const privacy::SecurePlan release =
      privacy::user_dp_release_plan(run->cfg, run->noised_values, run->secure);
  run->noise_sd = release.scale;
  run->noise_grid = release.grid;
  run->sampler_tv = release.sampler_tv;
  // the step count, decided before any ledger file is created unless one already exists (a run
  // directory reused, or resumed: what it spent counts)
  const privacy::DpEvent event = run->cfg.step_event();
  const bool existing =
      plan.run_dir && std::filesystem::exists(*plan.run_dir / privacy::Ledger::kFileName);
  auto affordable = [&](const privacy::Ledger* ledger) {
    return ledger ? ledger->affordable_count(event, kMaxSteps)
                  : privacy::steps_within_budget(event, dp_.epsilon, dp_.delta, dp_.accountant,
                                                 kMaxSteps);
  };
  auto decide = [&](const privacy::Ledger* ledger) {
    const double spent = ledger ? ledger->spent_epsilon() : 0.0;
    if (plan.train.until_budget) {
      planned_steps_ = affordable(ledger);
      if (planned_steps_ < 1)
        throw BudgetExceeded(fmt::format(
            "{}: epsilon = {} (spent {:.6g}) cannot afford one step at noise_multiplier {} and "
            "q = {} / {} (delta {})",
            name_, dp_.epsilon, spent, dp_.noise_multiplier, common_.batch_size, run->cfg.num_users,
            dp_.delta));
      return;
    }
    const privacy::Ledger fresh(dp_.epsilon, dp_.delta, dp_.accountant);
    const privacy::Ledger& l = ledger ? *ledger : fresh;
    if (!l.can_afford(event, plan.train.steps))
      throw BudgetExceeded(fmt::format(
          "{}: train.steps = {} would spend epsilon = {:.4g} > budget {} (spent {:.6g}; q = "
          "{:.4g}, "
          "noise_multiplier {}); the budget affords {} steps (or set train.until_budget: true)",
          name_, plan.train.steps, l.epsilon_if_charged(event, plan.train.steps), dp_.epsilon,
          spent, run->cfg.sampling_rate(), dp_.noise_multiplier, affordable(ledger)));
  };
  // a resumed run decided its step count when it started (the checkpoint holds it); resume_dp()
  // checks what is left against the ledger
  run->resuming = plan.resuming && existing;
  if (!existing) decide(nullptr);
  run->ledger = std::make_unique<privacy::Ledger>(
      plan.run_dir ? privacy::Ledger::open(*plan.run_dir, dp_.epsilon, dp_.delta, dp_.accountant)
                   : privacy::Ledger(dp_.epsilon, dp_.delta, dp_.accountant));
  run->ledger->set_relation(NeighbouringRelation::kAddRemove, run->unit);
  run->spent_before = run->ledger->spent_epsilon();
  if (existing && !run->resuming) decide(run->ledger.get());
  run_ = std::move(run);
}

void OfflineLearner::charge_block(TrainContext& ctx, std::int64_t step, std::int64_t total) {
  // the block of steps up to the next evaluation, charged (and durable) before its first step
  const std::int64_t every = ctx.train().eval_every > 0 ? ctx.train().eval_every : total;
  const std::int64_t count = std::min(total, (step - 1) / every * every + every) - step + 1;
  const std::string label = fmt::format("gradient steps {}-{}", step, step + count - 1);
  // a resumed run meets the charges its killed process made for these blocks (resume_dp)
  ctx.set_epsilon(run_->ledger->charge_or_reuse(run_->cfg.step_event(), count, label));
  run_->charged = step + count - 1;
}

void OfflineLearner::evaluate_private(TrainContext& ctx, std::int64_t step) {
  auto pol = policy();
  ctx.evaluate(*pol, step, 0);
}

void OfflineLearner::resume_dp(const TrainContext& ctx, std::uint64_t entries_at_checkpoint,
                               std::int64_t total) {
  privacy::Ledger& ledger = *run_->ledger;
  ledger.reuse_from(static_cast<std::size_t>(entries_at_checkpoint));
  // The charges after the checkpoint paid for blocks whose models were never released, except
  // after a fall-back to checkpoint.prev.bin: the newest checkpoint's model may have been
  // evaluated since. A seeded run draws the same noise again and releases exactly the same
  // values, so its charges stand; a run with fresh noise pays again, for every step after the
  // previous checkpoint (train() has set run_->charged to its step): the steps up to the end of
  // the block charged before it are released a second time with other noise.
  if (ctx.resumed_from_previous() && dp_.noise != "seeded")
    ledger.reuse_from(ledger.entries().size());
  const std::int64_t left = total - run_->charged - ledger.reusable_count();
  const privacy::DpEvent event = run_->cfg.step_event();
  if (left > 0 && !ledger.can_afford(event, left))
    throw BudgetExceeded(fmt::format(
        "{}: resuming needs {} more gradient steps, which would spend epsilon = {:.4g} > budget "
        "{} (spent {:.6g}{})",
        name_, left, ledger.epsilon_if_charged(event, left), dp_.epsilon, ledger.spent_epsilon(),
        ctx.resumed_from_previous() ? "; the steps after the damaged newest checkpoint are paid "
                                      "again, their model may have been released"
                                    : ""));
}

void OfflineLearner::finish_dp(const TrainContext& ctx, std::int64_t steps) {
  const DpRun& run = *run_;
  privacy::UserDpReportInput in;
  in.cfg = run.cfg;
  in.steps = steps;
  in.epsilon = run.ledger->spent_epsilon();
  in.delta = dp_.delta;
  in.accountant = dp_.accountant;
  in.unit = run.unit;
  in.noise_source = run.noise_name;
  in.seeded = dp_.noise == "seeded";
  in.noise_sd = run.noise_sd;
  in.sampler_tv = run.sampler_tv;
  in.covers = {policy_file() + " (the released model)",
               "metrics.csv (evaluation returns of the released model in public env episodes; "
               "epsilon spent)",
               "summary.json (final_eval of the released model, step counts, this record)",
               privacy::Ledger::kFileName};
  nlohmann::ordered_json d;
  d["until_budget"] = ctx.train().until_budget;
  d["budget_epsilon"] = dp_.epsilon;
  d["ledger"] = run.ledger->file() ? run.ledger->file()->string() : std::string("in memory");
  d["ledger_spent_before_run"] = run.spent_before;
  d["noised_values"] = run.noised_values;
  d["release"] = run.secure ? "secure: the clipped sum snapped to the sampler's grid, table-based "
                              "discrete Gaussian noise (sampler_delta); noise_sd covers C' + "
                              "sqrt(n) grid"
                            : "NoiseSource::add_gaussian, noise_sd = z C'";
  if (dp_.public_users > 0) {
    d["public"] =
        "m = public_users, a figure fixed in the configuration (it sets q = b / m); the env; the "
        "hyper-parameters. The dataset's own user count is not published";
    d["num_users_source"] = "public_users (configuration)";
  } else {
    d["public"] =
        "the number of users m, taken from the dataset and declared public by the configuration "
        "(public_users: 0; it sets q = b / m, as in paper 000 and DP-SGD practice, and is "
        "published as dataset_users); the env; the hyper-parameters";
    d["num_users_source"] = "the dataset's count, declared public (public_users: 0)";
  }
  d["relation"] = fmt::format(
      "add or remove one {} together with all the data it contributed; m is a public parameter "
      "of the mechanism, the same for both neighbours, so q = b / m and the denominator b do not "
      "depend on which of the two datasets is used",
      run.unit);
  d["non_finite"] =
      "a user whose gradient norm is NaN or infinite gets the clip factor 0 (a zero "
      "contribution); the run never stops because of it and the count is not published";
  d["post_processing"] =
      "target networks, Adam state, the greedy policy and its evaluation returns";
  in.extra_json = d.dump();
  privacy_ = privacy::user_dp_report(in);
}

}  // namespace dprl::algos
