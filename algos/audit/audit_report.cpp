#include "algos/audit/audit_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "engine/error.hpp"
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

namespace {

nlohmann::ordered_json number(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

}  // namespace

std::string audit_report_json(const AuditReport& r) {
  nlohmann::ordered_json j;
  j["kind"] = r.kind;
  j["learner"] = r.learner;
  j["mode"] = r.mode;
  j["mis_specify"] = r.mis_specify;
  j["epsilon_reported"] =
      number(std::isnan(r.epsilon_reported) ? r.epsilon_claimed : r.epsilon_reported);
  j["epsilon_claimed"] = number(r.epsilon_claimed);
  j["epsilon_lower"] = number(r.epsilon_lower);
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

}  // namespace dprl::algos
