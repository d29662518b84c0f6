// PpoKickstart::finish: the guarantee record and the summary figures of a kickstarted run
// (algos/kickstart/kickstart_ppo.hpp states what they mean).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "algos/kickstart/kickstart_ppo.hpp"
#include "engine/json_number.hpp"

namespace dprl::algos {

namespace {

using Json = nlohmann::ordered_json;

double lgamma_part(double k, double eta, int m) {
  return (m - 1.0) * std::lgamma(k * eta) + std::lgamma(k * (1.0 - (m - 1.0) * eta)) -
         m * std::lgamma(k / m);
}

Json per_query_json(const std::vector<privacy::QueryCost>& costs,
                    const privacy::DirichletTeacherParams& d) {
  Json out = Json::array();
  const double lf = (1.0 - d.actions * d.eta) * d.lipschitz;
  for (const auto& c : costs) {
    Json q;
    q["k"] = c.k;
    q["epsilon"] = json_number(c.epsilon);
    q["delta"] = c.delta;
    q["delta_method"] = c.delta_exact ? "exact (Beta CDF, m = 2)"
                                      : "Monte Carlo, Hoeffding upper end (1 - delta_beta)";
    if (!c.delta_exact) q["delta_estimate"] = c.delta_estimate;
    q["lgamma_part"] = json_number(lgamma_part(c.k, d.eta, d.actions));
    q["epsilon_per_unit_b"] = std::sqrt(d.actions) * lf * c.k * std::log(1.0 / d.tau);
    q["queries"] = c.queries;
    out.push_back(q);
  }
  return out;
}

// The paper-matched reading: tau and b chosen so that k0 gives (4.46, 0.05), and the totals the
// same queries would then have.
Json paper_matched_json(const privacy::DirichletTeacherParams& d,
                        const std::vector<privacy::QueryCost>& costs, privacy::NoiseSource& mc) {
  const privacy::PaperMatched pm = privacy::paper_matched(d, 4.46, 0.05, mc);
  Json j;
  j["target"] = {{"epsilon", 4.46}, {"delta", 0.05}, {"k0", d.k0}};
  j["attainable"] = pm.attainable;
  j["lgamma_part_k0"] = json_number(pm.lgamma_part_k0);
  if (!pm.note.empty()) j["note"] = pm.note;
  if (!pm.attainable) return j;
  j["tau"] = pm.tau;
  j["adjacency"] = pm.adjacency;
  j["delta_k0"] = pm.delta_k0;
  privacy::DirichletTeacherParams q = d;
  q.tau = pm.tau;
  q.adjacency = pm.adjacency;
  double eps = 0, delta = 0;
  for (const auto& c : costs) {
    const auto r = privacy::dirichlet_query_cost(q, c.k, mc);
    eps += r.epsilon * static_cast<double>(c.queries);
    delta += r.delta * static_cast<double>(c.queries);
  }
  j["epsilon_total"] = json_number(eps);
  j["delta_total"] = delta;
  j["vacuous"] = delta >= 1.0;
  return j;
}

}  // namespace

void PpoKickstart::finish() {
  double tail = 0;
  int tail_n = 0;
  for (std::size_t i = epoch_returns_.size() - std::min<std::size_t>(10, epoch_returns_.size());
       i < epoch_returns_.size(); ++i)
    if (!std::isnan(epoch_returns_[i])) {
      tail += epoch_returns_[i];
      ++tail_n;
    }
  extra_.push_back({"train_return_last10", tail_n ? tail / tail_n : std::nan("")});
  extra_.push_back({"queries", static_cast<double>(queries_)});
  if (!on_) return;
  const auto& lip = teacher_->lipschitz();
  extra_.push_back({"teacher_lipschitz_upper", lip.upper});
  extra_.push_back({"teacher_lipschitz_estimate", lip.estimate});
  PrivacyReport r;
  r.unit = "query";
  r.neighbouring = NeighbouringRelation::kReplaceOne;
  r.covers = {"the teacher's answers to the student's queries (held in memory, not written)"};
  r.formal = false;
  Json d;
  Json teacher;
  teacher["file"] = kp_.teacher;
  teacher["lipschitz_certified"] = lip.upper;
  teacher["lipschitz_power_iteration"] = lip.estimate;
  teacher["obs_scale"] = lip.obs_scale;
  teacher["softmax_factor"] = lip.softmax;
  Json layers = Json::array();
  for (const auto& l : lip.actor.layers)
    layers.push_back({{"estimate", l.estimate}, {"upper", l.upper}});
  teacher["layers_spectral_norm"] = layers;
  d["teacher"] = teacher;
  if (kp_.teacher_mode == "exact") {
    r.epsilon = std::numeric_limits<double>::infinity();
    r.delta = 0;
    r.accountant = "none";
    r.sensitivity = "unbounded: the exact teacher policy is released";
    r.noise_source = "none";
    d["mechanism"] = "none: every query answered with the teacher's exact softmax policy";
    r.details_json = d.dump();
    report_ = r;
    return;
  }
  const auto& p = mech_->params();
  const double lf = (1.0 - p.actions * p.eta) * p.lipschitz;
  r.epsilon = mech_->epsilon_total();
  r.delta = std::min(1.0, mech_->delta_total());
  r.accountant = "basic";
  r.sensitivity = fmt::format(
      "||x - x'||_2 <= b = {} (observations); ||f(x) - f(x')||_2 <= L b with L = (1 - m eta) * {} "
      "= {} (certified)",
      p.adjacency, p.lipschitz, lf);
  r.noise_source = noise_->name();
  r.reproducible_noise = kp_.noise == "seeded";
  d["mechanism"] = "Dirichlet mechanism on the eta-floored teacher policy (paper 003, Theorem 1)";
  d["relation"] = "b-adjacent observations (||x - x'||_2 <= b), teacher network fixed; per query";
  d["not_covered"] =
      "the teacher's training data (nothing bounds how a training record changes the network); "
      "the student's policy, metrics and summary, which read the observations directly";
  d["formal_false_because"] =
      "the run publishes only outputs that depend on the observations themselves";
  d["params"] = {{"m", p.actions},
                 {"k0", p.k0},
                 {"decay", p.decay},
                 {"decay_on", kp_.decay_on},
                 {"k_floor", p.k_floor},
                 {"after_floor", p.after_floor},
                 {"eta", p.eta},
                 {"tau", p.tau},
                 {"adjacency", p.adjacency},
                 {"lipschitz_policy", p.lipschitz},
                 {"lipschitz_floored", lf},
                 {"budget_epsilon", p.budget_epsilon},
                 {"budget_delta", p.budget_delta},
                 {"lambda", kp_.lambda},
                 {"beta", kp_.beta}};
  const auto costs = mech_->used_costs();
  d["per_query"] = per_query_json(costs, p);
  d["queries"] = mech_->queries();
  d["private_queries"] = mech_->private_queries();
  d["input_independent_queries"] = mech_->queries() - mech_->private_queries();
  d["switched_at_query"] = mech_->switched_at_query();
  d["budget_exhausted"] = mech_->budget_exhausted();
  d["totals"] = {{"composition", "basic (sum over private answers)"},
                 {"epsilon", json_number(mech_->epsilon_total())},
                 {"delta_sum", mech_->delta_total()},
                 {"vacuous", mech_->vacuous()}};
  d["paper_matched"] = paper_matched_json(p, costs, *mc_noise_);
  r.details_json = d.dump();
  report_ = r;
  extra_.push_back({"private_queries", static_cast<double>(mech_->private_queries())});
  extra_.push_back({"epsilon_total", mech_->epsilon_total()});
  extra_.push_back({"delta_total", mech_->delta_total()});
  extra_.push_back({"vacuous", mech_->vacuous() ? 1.0 : 0.0});
  extra_.push_back({"switched_at_query", static_cast<double>(mech_->switched_at_query())});
  if (!costs.empty()) {
    extra_.push_back({"epsilon_query_first", costs.front().epsilon});
    extra_.push_back({"delta_query_first", costs.front().delta});
  }
}

}  // namespace dprl::algos
