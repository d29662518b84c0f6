#include "algos/run/selective_audit.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "algos/audit/dirac_tap.hpp"
#include "algos/offline/offline_audit.hpp"
#include "engine/error.hpp"
#include "envs/register_envs.hpp"
#include "privacy/user_dp_sgd.hpp"

namespace dprl::algos {

AuditReport audit_selective(OfflineLearner& learner, const Dataset* stable, const Dataset* unstable,
                            std::int64_t num_experts, int batch_size, const SelectiveDpSgdParams& p,
                            const std::function<std::unique_ptr<Env>()>& make_env,
                            std::uint64_t seed, const AuditParams& a) {
  check_audit_params(a);
  if (!(p.p > 0.0))
    throw ParamError("audit: selective.p = 0 takes no DP step: there is no DP-SGD claim to audit");
  if (!stable && !unstable) throw DataError("audit: the pipeline has no data to train on");
  const auto M = a.canaries;
  const auto aseed = static_cast<std::uint64_t>(a.seed);
  auto env = make_env();
  const EnvSpec& spec = env->spec();
  // the noised values, for the white-box canaries' room
  learner.setup(static_cast<int>(spec.observation.dim()), static_cast<int>(spec.action.n), seed);
  std::vector<privacy::DpNetGrad> nets;
  for (const auto& t : learner.trained_nets()) nets.push_back({&t.net->shape(), t.cache, nullptr});
  const std::size_t coords = privacy::noised_values(nets);
  if (a.white_box && static_cast<std::size_t>(M) > coords)
    throw ParamError(fmt::format(
        "audit.canaries = {}: white-box canaries need one noised coordinate each ({} here)", M,
        coords));

  CanarySet set(M, aseed);
  const double q0 = static_cast<double>(batch_size) / static_cast<double>(num_experts);
  const double sens = mis_sensitivity_factor(a.mis_specify);
  const double noise_factor = mis_noise_factor(a.mis_specify);
  // black box: the canary experts join D_unst; the initial networks' margins (train_selective
  // initialises them from the seed below, so they are public) are the scores' baseline
  const Dataset& templ = unstable ? *unstable : *stable;
  CanaryUsers users;
  std::optional<Dataset> with;
  std::vector<double> base(static_cast<std::size_t>(M), 0.0);
  const std::uint64_t train_seed = audit_stream(aseed, 5);
  if (!a.white_box) {
    users = draw_canary_users(templ, spec, M, aseed);
    with = with_canary_users(unstable ? *unstable : templ.subset({}), users, set.in);
    learner.setup(static_cast<int>(spec.observation.dim()), static_cast<int>(spec.action.n),
                  train_seed);
    canary_margins(learner, users, base);
  }
  PoissonDiracTap dirac(set, q0, p.clip_norm * sens, noise_factor, audit_stream(aseed, 4));
  struct NoiseOnly final : privacy::ReleaseTap {
    double f = 1;
    double before(const Release& r, std::span<double>) override { return r.sd * f; }
    void after(const Release&, std::span<double>) override {}
  } noise_only;
  noise_only.f = noise_factor;
  SelectiveAudit hooks;
  hooks.extra_experts = M;
  hooks.clip_factor = sens;
  hooks.tap = a.white_box ? static_cast<privacy::ReleaseTap*>(&dirac) : &noise_only;

  // the run's training with the audit's own seed: one final evaluation episode, no files
  TrainParams tp;
  tp.steps = std::int64_t{1} << 40;
  tp.eval_every = 0;
  tp.eval_episodes = 1;
  Progress quiet(Progress::Mode::kOff);
  TrainContext ctx(make_env, train_seed, tp, nullptr, &quiet);
  const SelectiveResult res = train_selective(learner, stable, a.white_box ? unstable : &*with,
                                              num_experts, batch_size, p, ctx, &hooks);
  if (!a.white_box) {
    canary_margins(learner, users, set.score);
    for (std::int64_t j = 0; j < M; ++j) set.score[j] -= base[j];
  }

  AuditReport r;
  r.kind =
      "one-run audit of the DP-SGD part of the expert-level pipeline (selective DP-SGD, canary "
      "experts; Steinke, Nasr and Jagielski, NeurIPS 2023) against epsilon2: the DataRelease "
      "part (epsilon1) is not audited";
  r.mode = a.white_box ? "white-box" : "black-box";
  r.mis_specify = a.mis_specify;
  r.epsilon_claimed = res.epsilon;  // the DP-SGD part's ledger: epsilon2 spent
  r.delta = p.delta2;
  r.confidence = a.confidence;
  tally_canaries(set, a.guesses, r);
  nlohmann::ordered_json d;
  d["claim"] = "epsilon2 (DP-SGD part)";
  d["accounting"] = p.accounting;
  d["accountant"] = p.accountant;
  d["p"] = p.p;
  d["q0"] = q0;
  d["experts"] = num_experts;
  d["iterations"] = res.iterations;
  d["noisy_steps"] = res.noisy_steps;
  d["stable_steps"] = res.stable_steps;
  d["noise_multiplier"] = p.noise_multiplier;
  d["clip_norm"] = p.clip_norm;
  d["noise"] = p.noise;
  if (a.white_box) d["noise_sd_estimated"] = dirac.sd_seen();
  r.details_json = d.dump();
  return r;
}

AuditReport audit_pipeline(const PipelineSpec& s, const PipelineOptions& o, const AuditParams& a,
                           double epsilon_reported) {
  if (s.mode == "non_private")
    throw ConfigError(fmt::format(
        "audit: pipeline '{}' is not private (mode non_private): there is no claim to audit",
        s.name));
  check_audit_params(a);
  PipelineTrainData t = pipeline_train_data(s, o);
  auto algo = algo_registry().make(s.learner_id, s.learner_params);
  auto& learner = dynamic_cast<OfflineLearner&>(*algo);
  int batch = 0;
  for (const auto& [k, v] : algo->params())
    if (k == "batch_size") batch = std::stoi(v.text);
  ParamMap eval = s.population.env_params;
  if (s.eval_max_steps > 0)
    param_map_set(eval, "max_episode_steps", {std::to_string(s.eval_max_steps), "train"});
  const std::string env_id = s.population.env_id;
  AuditReport r = audit_selective(
      learner, t.stable ? &*t.stable : nullptr, t.unstable ? &*t.unstable : nullptr, t.experts,
      batch, s.selective, [env_id, eval] { return envs::make_env(env_id, eval); }, s.seed, a);
  r.learner = "expert_level (" + s.learner_id + ")";
  r.epsilon_reported = epsilon_reported;
  return r;
}

}  // namespace dprl::algos
