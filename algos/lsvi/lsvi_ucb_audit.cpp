#include "algos/lsvi/lsvi_ucb_audit.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "algos/audit/release_canaries.hpp"
#include "engine/error.hpp"
#include "envs/linear_mdp.hpp"

namespace dprl::algos {

void check_lsvi_ucb_audit(const LsviUcb& learner, const Env& env, const AuditParams& a) {
  check_audit_params(a);
  if (!learner.lsvi_params().private_)
    throw ParamError("audit: lsvi_ucb with private: false makes no private release");
  if (!a.white_box)
    throw ParamError(
        "audit: lsvi_ucb's releases (Gram matrices, regression targets) are not written; its "
        "claim is joint DP of the other users' recommendations, so only the white-box audit of "
        "the releases applies (audit.white_box: true, --white-box)");
  const auto* lin = dynamic_cast<const envs::LinearMdp*>(&env);
  if (!lin) throw ParamError("audit: lsvi_ucb needs the linear_mdp env");
  const auto& m = lin->model();
  const std::int64_t room = static_cast<std::int64_t>(m.horizon) * m.dim;
  if (a.canaries > room)
    throw ParamError(fmt::format(
        "audit.canaries = {}: white-box canaries need one entry (step h, index i) each of the "
        "H d = {} x {} = {} target entries",
        a.canaries, m.horizon, m.dim, room));
}

AuditReport audit_lsvi_ucb(const LsviUcb& learner,
                           const std::function<std::unique_ptr<Env>()>& make_env,
                           const TrainParams& train, const AuditParams& a) {
  auto env = make_env();
  check_lsvi_ucb_audit(learner, *env, a);
  const auto& model = dynamic_cast<const envs::LinearMdp&>(*env).model();
  const std::int64_t H = model.horizon;
  LsviUcb audited(learner.lsvi_params());
  const auto aseed = static_cast<std::uint64_t>(a.seed);
  CanarySet set(a.canaries, aseed);
  const bool replace = learner.lsvi_params().neighbouring == "replace";
  ReleaseCanaries tap(set, replace, mis_noise_factor(a.mis_specify),
                      mis_sensitivity_factor(a.mis_specify),
                      [H](const privacy::ReleaseTap::Release& r, std::int64_t j) -> std::int64_t {
                        if (r.part != j % H) return -1;
                        // a Gram node carries the first episode when its leaf is a power of 2
                        if (r.channel == 0 && (r.round & (r.round - 1)) != 0) return -1;
                        return j / H;
                      });
  audited.set_release_tap(&tap);
  PrivacyReport record;
  AuditReport r = run_release_audit(audited, make_env, train, a, set, "lsvi_ucb", record);
  r.kind =
      "one-run white-box audit of private LSVI-UCB's releases (Gram tree nodes and regression "
      "targets; canary users at the declared sensitivities; Steinke, Nasr and Jagielski, "
      "NeurIPS 2023)";
  nlohmann::ordered_json d;
  d["accountant"] = record.accountant;
  d["neighbouring"] = learner.lsvi_params().neighbouring;
  d["variant"] = learner.lsvi_params().variant;
  d["episodes"] = audited.train_episodes();
  d["updates"] = audited.updates();
  d["gram_releases_per_canary"] = tap.releases(0) / std::max<std::int64_t>(1, H);
  d["target_releases"] = tap.releases(1);
  d["sigma_gram"] = audited.sigma_gram();
  d["sigma_target"] = audited.sigma_target();
  d["noise_source"] = record.noise_source;
  r.details_json = d.dump();
  return r;
}

}  // namespace dprl::algos
