#include "algos/actor_critic/actor_critic_audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "algos/actor_critic/features.hpp"
#include "algos/audit/release_canaries.hpp"
#include "engine/error.hpp"

namespace dprl::algos {

namespace {

// the smallest privatised vector: the canaries' room
std::int64_t room(const ActorCriticParams& p, const EnvSpec& spec) {
  auto f = make_feature_map(p.features, spec.observation, spec.action);
  std::int64_t n = std::numeric_limits<std::int64_t>::max();
  if (p.dp == "actor" || p.dp == "both") n = std::min<std::int64_t>(n, f->state_action_dim());
  if (p.dp == "critic" || p.dp == "both") n = std::min<std::int64_t>(n, f->state_dim());
  return n;
}

}  // namespace

void check_actor_critic_audit(const ActorCritic& learner, const EnvSpec& spec,
                              const AuditParams& a) {
  check_audit_params(a);
  const ActorCriticParams& p = learner.ac_params();
  if (p.dp == "none")
    throw ParamError("audit: actor_critic with dp: none makes no private release");
  if (!a.white_box)
    throw ParamError(
        "audit: actor_critic's claim covers only its noised vectors, which the run does not "
        "write (not its policy or metrics): only the white-box audit applies (audit.white_box: "
        "true, --white-box)");
  const std::int64_t n = room(p, spec);
  if (a.canaries > n)
    throw ParamError(fmt::format(
        "audit.canaries = {}: white-box canaries need one coordinate each of every privatised "
        "vector ({} here)",
        a.canaries, n));
}

AuditReport audit_actor_critic(const ActorCritic& learner,
                               const std::function<std::unique_ptr<Env>()>& make_env,
                               const TrainParams& train, const AuditParams& a) {
  auto env = make_env();
  check_actor_critic_audit(learner, env->spec(), a);
  // the run's learner, without the non-private twin and any shared ledger file (in memory)
  ActorCriticParams p = learner.ac_params();
  p.trace_similarity = false;
  p.ledger.clear();
  ActorCritic audited(p);
  const auto aseed = static_cast<std::uint64_t>(a.seed);
  CanarySet set(a.canaries, aseed);
  ReleaseCanaries tap(set, true, mis_noise_factor(a.mis_specify),
                      mis_sensitivity_factor(a.mis_specify),
                      [](const privacy::ReleaseTap::Release&, std::int64_t j) { return j; });
  audited.set_release_tap(&tap);
  PrivacyReport record;
  AuditReport r = run_release_audit(audited, make_env, train, a, set, "actor_critic", record);
  r.kind =
      "one-run white-box audit of the DP actor-critic's noised releases (canaries of the "
      "declared sensitivity 2C; Steinke, Nasr and Jagielski, NeurIPS 2023)";
  nlohmann::ordered_json d;
  d["accountant"] = record.accountant;
  d["dp"] = p.dp;
  d["neighbouring"] = "replace one trajectory";
  d["sensitivity"] = "2C per release (C the norm each vector is rescaled to)";
  d["actor_releases"] = tap.releases(0);
  d["critic_releases"] = tap.releases(1);
  d["sigma"] = ActorCritic::paper_sigma(p.epsilon, p.delta);
  d["clip"] = p.clip;
  d["noise_source"] = record.noise_source;
  d["formal"] = record.formal;
  r.details_json = d.dump();
  return r;
}

}  // namespace dprl::algos
