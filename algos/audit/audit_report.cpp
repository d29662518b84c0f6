#include "algos/audit/audit_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "algos/audit/audited_record.hpp"
#include "engine/error.hpp"
#include "engine/json_number.hpp"
#include "engine/rng.hpp"
#include "privacy/one_run_audit.hpp"

namespace dprl::algos {

void check_audit_params(const AuditParams& a) {
  (void)read_params<AuditParams>(dump_params(a), "audit");
  if (a.guesses > a.canaries)
    throw ParamError(
        fmt::format("audit.guesses = {} must be <= audit.canaries = {}", a.guesses, a.canaries));
}

double mis_noise_factor(const std::string& m) {
  if (m == "halve-noise") return 0.5;
  if (m == "quarter-noise") return 0.25;
  if (m == "near-zero-noise") return 0.01;
  return 1.0;
}

double mis_sensitivity_factor(const std::string& m) {
  return m == "double-sensitivity" ? 2.0 : 1.0;
}

std::uint64_t audit_stream(std::uint64_t seed, std::uint64_t role) {
  return derive_seed(seed, Domain::kAlgo, kAuditStream, role);
}

CanarySet::CanarySet(std::int64_t m, std::uint64_t seed) {
  Rng coin(audit_stream(seed, 0));
  in.resize(static_cast<std::size_t>(m));
  score.assign(static_cast<std::size_t>(m), 0.0);
  for (auto& b : in) {
    b = (coin.next_u64() >> 63) != 0;
    included += b;
  }
}

void tally_canaries(const CanarySet& c, std::int64_t guesses, AuditReport& r) {
  const privacy::audit::OneRunTally t =
      privacy::audit::one_run_tally(c.score, c.in, guesses, r.delta, r.confidence);
  r.canaries = c.size();
  r.included = c.included;
  r.guesses = t.guesses;
  r.correct = t.correct;
  r.epsilon_lower = t.epsilon_lower;
  r.refuted = r.epsilon_lower > r.epsilon_claimed;
}

std::string audit_report_json(const AuditReport& r) {
  nlohmann::ordered_json j;
  j["kind"] = r.kind;
  j["learner"] = r.learner;
  j["mode"] = r.mode;
  j["mis_specify"] = r.mis_specify;
  j["epsilon_reported"] =
      json_number(std::isnan(r.epsilon_reported) ? r.epsilon_claimed : r.epsilon_reported);
  j["epsilon_claimed"] = json_number(r.epsilon_claimed);
  j["epsilon_lower"] = json_number(r.epsilon_lower);
  j["confidence"] = r.confidence;
  j["refuted"] = r.refuted;
  j["delta"] = r.delta;
  j["canaries"] = r.canaries;
  j["included"] = r.included;
  j["guesses"] = r.guesses;
  j["correct"] = r.correct;
  const auto d = nlohmann::ordered_json::parse(r.details_json);
  for (auto it = d.begin(); it != d.end(); ++it) j[it.key()] = it.value();
  return j.dump();
}

std::string audit_report_text(const AuditReport& r) {
  std::string s = fmt::format("{} ({}, {})\n", r.kind, r.learner, r.mode);
  if (r.canaries > 0)
    s += fmt::format("canaries        = {} ({} included)\n", r.canaries, r.included);
  s += fmt::format("epsilon_claimed = {:.6g} at delta = {:.6g}", r.epsilon_claimed, r.delta);
  if (!std::isnan(r.epsilon_reported) && r.epsilon_reported != r.epsilon_claimed)
    s += fmt::format(" (the run reports {:.6g})", r.epsilon_reported);
  s += "\n";
  if (r.guesses > 0)
    s += fmt::format("epsilon_lower   = {:.6g} (confidence {}; {} of {} guesses correct)\n",
                     r.epsilon_lower, r.confidence, r.correct, r.guesses);
  else
    s += fmt::format("epsilon_lower   = {:.6g} (confidence {})\n", r.epsilon_lower, r.confidence);
  s += fmt::format("refuted         = {}\n", r.refuted ? "yes" : "no");
  return s;
}

namespace {

constexpr const char* kAuditNote =
    "not formal: an audit trained this configuration again on the run's protected data (with "
    "canaries, possibly at reduced noise) and published its result; that training is charged to "
    "no ledger";

// covers without the audit's outputs: summary.json minus its "audit" object, no audit.json
std::vector<std::string> covers_without_audit(const std::vector<std::string>& covers) {
  std::vector<std::string> out;
  for (const auto& c : covers) {
    if (c.find("audit.json") != std::string::npos) continue;
    if (c.rfind("summary.json", 0) == 0 && c.find("\"audit\"") == std::string::npos)
      out.push_back(c + " (except its \"audit\" object)");
    else
      out.push_back(c);
  }
  return out;
}

nlohmann::ordered_json marked(nlohmann::ordered_json p) {
  p["formal"] = false;
  if (p.contains("covers") && p["covers"].is_array())
    p["covers"] = covers_without_audit(p["covers"].get<std::vector<std::string>>());
  nlohmann::ordered_json d = p.contains("details") && p["details"].is_object()
                                 ? p["details"]
                                 : nlohmann::ordered_json::object();
  d["audit"] = kAuditNote;
  d["not_covered_by_audit"] = "audit.json and summary.json \"audit\"";
  p["details"] = std::move(d);
  return p;
}

}  // namespace

bool audit_retrains_on_run_data(const AuditReport& r) { return r.mode != "mechanism"; }

void mark_audited(PrivacyReport& record) {
  record.formal = false;
  record.covers = covers_without_audit(record.covers);
  nlohmann::ordered_json d = record.details_json.empty()
                                 ? nlohmann::ordered_json::object()
                                 : nlohmann::ordered_json::parse(record.details_json);
  nlohmann::ordered_json p;
  p["details"] = std::move(d);
  record.details_json = marked(std::move(p))["details"].dump();
}

std::string mark_audited_json(const std::string& privacy_json) {
  return marked(nlohmann::ordered_json::parse(privacy_json)).dump();
}

double robust_scale(std::span<const double> x, double fallback) {
  std::vector<double> v(x.begin(), x.end());
  if (v.size() < 2) return fallback;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  const double med = *mid;
  for (double& e : v) e = std::abs(e - med);
  std::nth_element(v.begin(), mid, v.end());
  const double s = 1.4826 * *mid;
  return s > 0 && std::isfinite(s) ? s : fallback;
}

}  // namespace dprl::algos
