#include "algos/expert_level/selective_dp_sgd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "privacy/ledger.hpp"
#include "privacy/steps_within_budget.hpp"
#include "privacy/user_dp_sgd.hpp"

namespace dprl::algos {

void SelectiveDpSgdParams::check() const {
  if (p > 0.0 && !(epsilon2 > 0.0 && delta2 > 0.0))
    throw ParamError(fmt::format(
        "selective.p = {} takes DP steps, which need epsilon2 > 0 and delta2 > 0 (got {} and {})",
        p, epsilon2, delta2));
}

namespace {

struct Sources {
  std::unique_ptr<privacy::NoiseSource> noise, sampling, coins;
};

Sources make_sources(const SelectiveDpSgdParams& p, std::uint64_t seed) {
  Sources s;
  if (p.noise == "seeded") {
    s.noise = privacy::make_seeded_noise(seed, 10);
    s.sampling = privacy::make_seeded_noise(seed, 11);
    s.coins = privacy::make_seeded_noise(seed, 12);
  } else {
    s.noise = privacy::make_os_entropy_noise(true);
    s.sampling = privacy::make_os_entropy_noise(false);
    s.coins = privacy::make_os_entropy_noise(false);
  }
  return s;
}

PrivacyReport dp_part_report(const SelectiveDpSgdParams& p, const privacy::UserDpSgdConfig& cfg,
                             const SelectiveResult& r, const privacy::Ledger& ledger,
                             const std::string& noise_source) {
  const bool seeded = p.noise == "seeded";
  PrivacyReport rep;
  rep.epsilon = ledger.spent_epsilon();
  rep.delta = p.delta2;
  rep.accountant = p.accountant;
  rep.neighbouring = "add-remove";
  rep.unit = "expert";
  rep.sensitivity = fmt::format(
      "L2 C = {} per sampled expert (one transition; joint norm over all trained networks)",
      cfg.clip_norm);
  rep.covers = {"policy.bin (the released model)",
                "metrics.csv (evaluation returns of the model in public env episodes; epsilon)",
                "summary.json", privacy::Ledger::kFileName};
  rep.formal = !seeded && p.accounting == "sound";
  rep.noise_source = noise_source;
  rep.reproducible_noise = seeded;
  nlohmann::ordered_json d;
  d["mechanism"] =
      "selective DP-SGD (paper 000 Alg. 3; Alg. 4 steps): Bernoulli(p) between an expert-level "
      "DP-SGD step on D_unst and an ordinary step on D_stable";
  d["relation"] = "add or remove one expert together with all of its trajectories";
  d["accounting"] = p.accounting;
  d["p"] = p.p;
  d["noise_multiplier"] = p.noise_multiplier;
  d["clip_norm"] = cfg.clip_norm;
  d["expected_batch"] = cfg.expected_batch;
  d["num_experts"] = cfg.num_users;
  d["q0"] = cfg.sampling_rate();
  d["q_accounted"] = p.accounting == "paper" ? p.p * cfg.sampling_rate() : cfg.sampling_rate();
  d["iterations"] = r.iterations;
  d["noisy_steps"] = r.noisy_steps;
  d["stable_steps"] = r.stable_steps;
  d["budget_epsilon"] = p.epsilon2;
  d["public"] = "the number of experts m (it sets q0 = b/m), the coin draws (data-independent)";
  if (p.accounting == "paper")
    d["note"] =
        "paper accounting (q = p b/m per iteration) is valid only if noisy and stable steps "
        "cannot be told apart; with observable intermediate models it is optimistic, so the "
        "record is not formal";
  else if (seeded)
    d["note"] = "seeded noise: reproducible, not a formal guarantee";
  rep.details_json = d.dump();
  return rep;
}

}  // namespace

SelectiveResult train_selective(OfflineLearner& learner, const Dataset* stable,
                                const Dataset* unstable, std::int64_t num_experts, int batch_size,
                                const SelectiveDpSgdParams& params, TrainContext& ctx) {
  SelectiveDpSgdParams p = params;
  validate_params(p, "selective");
  if (stable && stable->num_transitions() == 0) stable = nullptr;
  if (unstable && unstable->num_transitions() == 0) unstable = nullptr;
  const bool dp = p.p > 0.0;
  if (!dp && !stable)
    throw DataError("selective DP-SGD: p = 0 trains on the stable data only, and it is empty");
  if (!dp && p.stable_steps < 1)
    throw ParamError("selective.stable_steps must be >= 1 when p = 0 (no DP step runs)");
  auto env = ctx.make_env();
  const EnvSpec& spec = env->spec();
  learner.setup(static_cast<int>(spec.observation.dim()), static_cast<int>(spec.action.n),
                ctx.seed());
  ctx.set_step_column("iteration");
  std::optional<TransitionSampler> ss, us;
  if (stable) ss.emplace(*stable);
  if (unstable) us.emplace(*unstable);

  privacy::UserDpSgdConfig cfg;
  cfg.noise_multiplier = p.noise_multiplier;
  cfg.clip_norm = p.clip_norm;
  cfg.expected_batch = batch_size;
  cfg.num_users = num_experts;
  cfg.validate();
  const double q0 = cfg.sampling_rate();
  Sources src = make_sources(p, ctx.seed());
  if (dp && p.noise == "seeded")
    std::fprintf(stderr,
                 "dprl: warning: selective.noise: seeded makes the run reproducible but not "
                 "formally private (the seed regenerates the noise)\n");

  SelectiveResult r;
  std::optional<privacy::Ledger> ledger;
  std::int64_t total = p.stable_steps;  // iterations (sound: a cap; the noisy count ends the run)
  const double q_acc = p.accounting == "paper" ? p.p * q0 : q0;
  const privacy::DpEvent event =
      privacy::DpEvent::poisson_sampled(q_acc, privacy::DpEvent::gaussian(p.noise_multiplier));
  if (dp) {
    ledger.emplace(p.epsilon2, p.delta2, p.accountant);
    ledger->set_noise_source(src.noise->name());
    const auto n = privacy::steps_within_budget(p.noise_multiplier, q_acc, p.epsilon2, p.delta2,
                                                p.accountant, p.max_iterations);
    if (n.steps < 1)
      throw BudgetExceeded(fmt::format(
          "selective: epsilon2 = {} cannot afford one step at noise_multiplier {} and q = {:.4g}",
          p.epsilon2, p.noise_multiplier, q_acc));
    r.planned_noisy = p.accounting == "sound" ? n.steps : 0;
    total = p.accounting == "sound" ? p.max_iterations : n.steps;
  }
  const std::int64_t every = ctx.train().eval_every > 0 ? ctx.train().eval_every : total;
  Rng rng(derive_seed(ctx.seed(), Domain::kAlgo, 0));
  OfflineBatch batch;
  std::vector<std::uint8_t> coins;
  bool finished = false;
  while (!finished) {
    // the block up to the next evaluation: draw its coins, charge its noisy steps, then run it
    const std::int64_t len = std::min(every - r.iterations % every, total - r.iterations);
    coins.clear();
    std::int64_t noisy = 0;
    for (std::int64_t i = 0; i < len; ++i) {
      const bool c = dp && (p.p >= 1.0 || src.coins->bernoulli(p.p));
      coins.push_back(c ? 1 : 0);
      noisy += c ? 1 : 0;
      if (p.accounting == "sound" && dp && r.noisy_steps + noisy == r.planned_noisy) break;
    }
    const auto n = static_cast<std::int64_t>(coins.size());
    const std::int64_t charge = p.accounting == "paper" ? n : noisy;
    if (dp && charge > 0) {
      ledger->charge(event, charge,
                     fmt::format("iterations {}-{}", r.iterations + 1, r.iterations + n));
      ctx.set_epsilon(ledger->spent_epsilon());
    }
    for (std::uint8_t c : coins) {
      if (c) {
        if (us) {
          us->poisson_users(q0, 1, *src.sampling, batch);
        } else {
          batch.n = batch.users = 0;
        }
        learner.dp_step(batch, cfg, *src.noise);
        ++r.noisy_steps;
      } else if (ss) {
        ss->uniform(batch_size, rng, batch);
        learner.step(batch);
        ++r.stable_steps;
      } else {
        ++r.skipped;
      }
    }
    r.iterations += n;
    finished = r.iterations >= total ||
               (dp && p.accounting == "sound" && r.noisy_steps >= r.planned_noisy);
    r.capped =
        dp && p.accounting == "sound" && r.noisy_steps < r.planned_noisy && r.iterations >= total;
    if (ctx.eval_due(r.iterations) || finished) {
      auto pol = learner.policy();
      ctx.evaluate(*pol, r.iterations, 0,
                   {{"noisy_steps", static_cast<double>(r.noisy_steps)},
                    {"stable_steps", static_cast<double>(r.stable_steps)}});
    }
    // sound mode ends by its noisy-step count: about planned / p iterations
    const std::int64_t shown =
        dp && p.accounting == "sound"
            ? static_cast<std::int64_t>(static_cast<double>(r.planned_noisy) / p.p)
            : total;
    ctx.progress().update(r.iterations, std::max(shown, r.iterations), 0,
                          ctx.last_eval().return_mean);
  }
  if (ledger) {
    r.epsilon = ledger->spent_epsilon();
    ctx.write_file(privacy::Ledger::kFileName, ledger->to_json());
    r.report = dp_part_report(p, cfg, r, *ledger, src.noise->name());
  }
  return r;
}

}  // namespace dprl::algos
