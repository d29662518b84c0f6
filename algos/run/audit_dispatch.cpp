#include "algos/run/audit_dispatch.hpp"

#include <fmt/format.h>

#include "algos/actor_critic/actor_critic_audit.hpp"
#include "algos/kickstart/kickstart_audit.hpp"
#include "algos/lsvi/lsvi_ucb_audit.hpp"
#include "algos/model_based/primorl_audit.hpp"
#include "algos/offline/offline_audit.hpp"
#include "engine/error.hpp"

namespace dprl::algos {

namespace {

constexpr const char* kAuditable =
    "audits exist for bc, discrete_cql, discrete_bcq, primorl, actor_critic, lsvi_ucb, "
    "ppo_kickstart and the expert-level pipeline; mechanisms: dprl audit mechanism";

[[noreturn]] void not_private(const AuditInputs& in, const std::string& why) {
  throw ConfigError(fmt::format("audit: algo '{}' is not private ({}): there is no claim to audit",
                                in.algo_id, why));
}

// The learner's audit kind, after checking it is private.
enum class Kind { kOffline, kPrimorl, kActorCritic, kLsvi, kKickstart };

Kind kind_of(Algorithm& algo, const AuditInputs& in) {
  if (auto* l = dynamic_cast<OfflineLearner*>(&algo)) {
    if (!l->dp_params().dp) not_private(in, "algo.params.dp: false");
    return Kind::kOffline;
  }
  if (auto* l = dynamic_cast<Primorl*>(&algo)) {
    if (l->primorl_params().variant != "tdp")
      not_private(
          in, fmt::format("variant {}: no noise, no finite epsilon", l->primorl_params().variant));
    return Kind::kPrimorl;
  }
  if (auto* l = dynamic_cast<ActorCritic*>(&algo)) {
    if (l->ac_params().dp == "none") not_private(in, "algo.params.dp: none");
    return Kind::kActorCritic;
  }
  if (auto* l = dynamic_cast<LsviUcb*>(&algo)) {
    if (!l->lsvi_params().private_) not_private(in, "algo.params.private: false");
    return Kind::kLsvi;
  }
  if (auto* l = dynamic_cast<PpoKickstart*>(&algo)) {
    if (l->kickstart_params().teacher_mode != "dirichlet")
      not_private(in, fmt::format("teacher_mode {}", l->kickstart_params().teacher_mode));
    return Kind::kKickstart;
  }
  throw ConfigError(
      fmt::format("audit: algo '{}' makes no private release, so there is no claim to audit ({})",
                  in.algo_id, kAuditable));
}

}  // namespace

void check_audit(Algorithm& probe, const AuditInputs& in, const AuditParams& a) {
  switch (kind_of(probe, in)) {
    case Kind::kOffline:
      check_offline_audit(dynamic_cast<OfflineLearner&>(probe), in.env.spec(), *in.data,
                          in.train.steps, in.train.until_budget, a);
      return;
    case Kind::kPrimorl:
      check_primorl_audit(dynamic_cast<Primorl&>(probe), in.env.spec(), a);
      return;
    case Kind::kActorCritic:
      check_actor_critic_audit(dynamic_cast<ActorCritic&>(probe), in.env.spec(), a);
      return;
    case Kind::kLsvi:
      check_lsvi_ucb_audit(dynamic_cast<LsviUcb&>(probe), in.env, a);
      return;
    case Kind::kKickstart:
      // the teacher file may be trained by the run itself (teacher_train_steps): checked then
      check_kickstart_audit(dynamic_cast<PpoKickstart&>(probe), in.env.spec(), a, false);
      return;
  }
}

AuditReport run_audit(Algorithm& fresh, const AuditInputs& in, const AuditParams& a,
                      double epsilon_reported) {
  AuditReport r;
  switch (kind_of(fresh, in)) {
    case Kind::kOffline: {
      const OfflineAuditReport o =
          audit_offline(dynamic_cast<OfflineLearner&>(fresh), in.env.spec(), *in.data,
                        in.train.steps, in.train.until_budget, a);
      r = to_audit_report(o, in.algo_id, epsilon_reported);
      break;
    }
    case Kind::kPrimorl:
      r = audit_primorl(dynamic_cast<Primorl&>(fresh), in.make_env, in.seed, a);
      break;
    case Kind::kActorCritic:
      r = audit_actor_critic(dynamic_cast<ActorCritic&>(fresh), in.make_env, in.train, a);
      break;
    case Kind::kLsvi:
      r = audit_lsvi_ucb(dynamic_cast<LsviUcb&>(fresh), in.make_env, in.train, a);
      break;
    case Kind::kKickstart:
      r = audit_kickstart(dynamic_cast<PpoKickstart&>(fresh), in.make_env, a);
      break;
  }
  r.learner = in.algo_id;
  r.epsilon_reported = epsilon_reported;
  return r;
}

}  // namespace dprl::algos
