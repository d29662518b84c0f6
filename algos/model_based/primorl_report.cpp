#include "algos/model_based/primorl_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "engine/json_number.hpp"
#include "privacy/secure_release.hpp"

namespace dprl::algos::model_based {

PrivacyReport primorl_privacy_report(const PrimorlParams& p, const PipelineFacts& f,
                                     const std::string& data_source) {
  PrivacyReport r;
  const bool dp = p.variant == "tdp";
  const bool seeded = p.noise == "seeded";
  r.delta = p.delta;
  const std::string unit = data_source.empty() ? "trajectory" : "user";
  const bool k_configured = p.public_trajectories > 0;
  const auto K = static_cast<double>(f.denominator_units);
  r.neighbouring = NeighbouringRelation::kAddRemove;
  // the test split is carved from the input: its units are used without noise (normaliser,
  // snapshot selection, the test curve) and are not protected
  r.unit = unit + " of the training split (test-split units are not protected)";
  r.covers = {"the model ensemble (every DP-FedAvg round's release), for the training-split units",
              "policy.bin (SAC trained only on model rollouts and rho_0 resets)",
              "metrics.csv",
              "model_training.csv (test split curve: a function of the unprotected test units)",
              "summary.json",
              "privacy_ledger.json"};
  nlohmann::ordered_json d;
  d["variant"] = p.variant;
  d["mechanism"] =
      "DP-FedAvg over trajectories: Poisson sampling at rate q, per-trajectory local training "
      "projected onto the ensemble clip set after every step (an update with a non-finite value "
      "counts as zero), sum / (q K), Gaussian noise z C / (q K) on every parameter";
  d["relation"] = fmt::format(
      "add or remove one {} of the training split with all its transitions; each unit's side of "
      "the split is a keyed hash of its own id and its local training stream is keyed by its id, "
      "so the neighbour's training table differs in that unit alone",
      unit);
  d["not_protected"] =
      "the test split's units: they set the input normaliser where a space bound is infinite, "
      "select the best snapshot, and give the test figures (model_training.csv, progress, "
      "summary extras), all without noise";
  d["K"] = f.denominator_units;
  if (k_configured) {
    d["K_source"] =
        "public_trajectories: a public figure fixed in the configuration; the training split's "
        "size is not published";
  } else {
    d["K_train_trajectories"] = f.train_units;
    d["train_transitions"] = f.train_transitions;
    d["K_source"] =
        data_source.empty()
            ? "the training split's count, declared public (public_trajectories: 0); it follows "
              "from the public collection settings, as in PriMORL and DP-FedAvg"
            : "the training split's count, declared public (public_trajectories: 0, as in "
              "DP-FedAvg); set public_trajectories to keep it out of the outputs";
  }
  if (!data_source.empty()) {
    d["data_source"] = data_source;
    d["unit_note"] =
        "each user id of the dataset is one unit (a D4RL file without user ids: one per episode); "
        "all of a user's trajectories are one client";
  }
  d["test_trajectories_unprotected"] = f.test_units;
  d["q"] = p.q;
  d["qK"] = p.q * K;
  d["clip_norm"] = p.clip_norm;
  d["clipping"] = p.clipping;
  d["members"] = p.members;
  d["rounds_run"] = f.rounds;
  d["rounds_planned"] = p.rounds;
  d["stopped_by_budget"] = f.stopped_by_budget;
  if (dp) {
    r.epsilon = f.epsilon_rdp;
    r.sampler_delta = privacy::sampler_delta(r.epsilon, f.sampler_tv);
    r.delta = privacy::record_delta(p.delta, r.sampler_delta);
    r.accountant = "rdp";
    r.sensitivity = fmt::format(
        "L2 C = {} on the sum of clipped trajectory updates per round (C / (q K) = {:.6g} on "
        "the average)",
        p.clip_norm, p.clip_norm / (p.q * K));
    r.noise_source = f.noise_source;
    r.reproducible_noise = seeded;
    r.formal = !seeded && !p.report_data;
    d["z"] = p.z;
    d["noise_std"] = f.noise_std;
    d["released_noise_std"] = f.released_noise_std;
    if (!seeded)
      d["release"] =
          "each round's average snapped to a power-of-two grid with exact discrete Gaussian noise "
          "on the grid, scale inflated to cover the snapping; RDP accounting of the "
          "Poisson-subsampled event is that of the continuous Gaussian, which the discrete one "
          "matches closely (Canonne, Kamath, Steinke 2020) but without a proof relied on here";
    d["event"] =
        fmt::format("self_composed(poisson_sampled({}, gaussian({})), {})", p.q, p.z, f.rounds);
    d["epsilon_rdp_cks"] = json_number(f.epsilon_rdp);
    d["ledger"] =
        "privacy_ledger.json in the run directory, charged before each block of rounds up to an "
        "evaluation; epsilon is what it holds, so a model stage restarted after a kill composes "
        "with the earlier one's charges";
    d["ledger_spent_before_run"] = f.epsilon_spent_before;
    d["epsilon_rdp_classical"] = json_number(f.epsilon_rdp_classical);
    d["epsilon_pld"] = json_number(f.epsilon_pld);
    if (std::isinf(f.epsilon_pld))
      d["pld_note"] =
          "the PLD accountant cannot bound epsilon at this noise (inf); the RDP epsilon is the "
          "guarantee";
    d["rdp_orders"] = "dp_accounting's 156 default orders";
    d["budget_epsilon"] = p.budget_epsilon;
  } else {
    r.epsilon = std::numeric_limits<double>::infinity();
    r.accountant = "none";
    r.sensitivity = p.variant == "no_noise" ? fmt::format("L2 C = {}, no noise", p.clip_norm)
                                            : "unbounded (no clipping)";
    r.noise_source = "none";
    r.formal = false;
    d["note"] = "no noise is added: there is no finite epsilon";
  }
  if (seeded && dp)
    d["note"] = "seeded noise: anyone holding the seed can regenerate it; not a formal guarantee";
  if (p.report_data)
    d["report_data"] =
        "data return statistics (data_returns.csv, data_* extras) are computed from the private "
        "data without noise: not covered";
  if (f.stopped_by_budget) d["budget_note"] = "the budget stopped model training early";
  d["not_accounted"] = "hyper-parameter tuning (as in PriMORL)";
  r.details_json = d.dump();
  return r;
}

std::string model_curve_csv(const TrainResult& r, bool with_private_stats) {
  // the realised sample sizes (mean_clients) are counts of the private units without noise:
  // written only with the other private statistics
  std::string out = "round,test_mse,test_std,epsilon";
  out += with_private_stats ? ",mean_clients,mean_update_norm,clipped_fraction\n" : "\n";
  for (const auto& p : r.curve) {
    const std::string eps = std::isinf(p.epsilon) ? "inf" : fmt::format("{:.9g}", p.epsilon);
    out += fmt::format("{},{:.9g},{:.6g},{}", p.round, p.test_mse, p.test_std, eps);
    out += with_private_stats
               ? fmt::format(",{:.6g},{:.6g},{:.4f}\n", p.mean_clients, p.mean_norm, p.clipped)
               : "\n";
  }
  return out;
}

std::string timing_json(const StageTimes& t) {
  nlohmann::ordered_json j;
  j["data_s"] = t.data_s;
  j["model_s"] = t.model_s;
  j["policy_s"] = t.policy_s;
  j["eval_s"] = t.eval_s;
  j["total_s"] = t.data_s + t.model_s + t.policy_s;
  j["data_cpu_s"] = t.data_cpu_s;
  j["model_cpu_s"] = t.model_cpu_s;
  j["policy_cpu_s"] = t.policy_cpu_s;
  j["total_cpu_s"] = t.data_cpu_s + t.model_cpu_s + t.policy_cpu_s;
  // CPU of this run alone (work_cpu_seconds), not of the process that may run others beside it
  j["cpu_scope"] = "run";
  return j.dump(2) + "\n";
}

}  // namespace dprl::algos::model_based
