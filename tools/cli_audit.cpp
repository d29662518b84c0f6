// dprl audit mechanism | dpsgd: empirical lower bounds on epsilon (docs/privacy_audit.md).
//
// Exit status: 0 when the claim stands, 3 when the audit refutes it (epsilon_lower >
// epsilon_claimed; reported on stderr too), 2 on bad input (one line naming the flag).
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/error.hpp"
#include "privacy/mechanism_audit.hpp"
#include "privacy/one_run_audit.hpp"
#include "tools/cli.hpp"

namespace dprl::cli {
namespace {

using nlohmann::ordered_json;
namespace au = dprl::privacy::audit;

ordered_json number(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

struct MechanismArgs {
  au::MechanismAuditParams p;
  std::string pair;
  bool json = false;
};

void parse_pair(const std::string& s, au::MechanismAuditParams& p) {
  const auto comma = s.find(',');
  if (comma == std::string::npos)
    throw ParamError(fmt::format("--pair = {} must be two values x0,x1", s));
  try {
    std::size_t u0 = 0, u1 = 0;
    p.x0 = std::stod(s.substr(0, comma), &u0);
    p.x1 = std::stod(s.substr(comma + 1), &u1);
    if (u0 != comma || u1 != s.size() - comma - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw ParamError(fmt::format("--pair = {} must be two numbers x0,x1", s));
  }
  p.has_pair = true;
}

void refuted_exit(bool refuted, double lower, double claimed) {
  if (!refuted) return;
  std::fflush(stdout);
  fmt::print(stderr,
             "dprl: audit REFUTES the claim: epsilon_lower = {:.4g} > epsilon_claimed = {:.4g}\n",
             lower, claimed);
  throw ExitStatus{3};
}

void cmd_mechanism(MechanismArgs& a) {
  if (!a.pair.empty()) parse_pair(a.pair, a.p);
  const au::MechanismAuditReport r = au::audit_mechanism(a.p);
  if (a.json) {
    ordered_json j{{"mechanism", a.p.mechanism},
                   {"mis_specify", a.p.mis_specify},
                   {"epsilon_claimed", number(r.epsilon_claimed)},
                   {"epsilon_lower", number(r.epsilon_lower)},
                   {"delta", r.delta},
                   {"confidence", r.confidence},
                   {"refuted", r.refuted},
                   {"samples", r.samples},
                   {"seed", a.p.seed},
                   {"noise_scale", r.noise_scale},
                   {"sets", r.sets},
                   {"best_event",
                    {{"set", fmt::format("{} >= t", r.statistic)},
                     {"threshold", r.threshold},
                     {"fpr", r.fpr},
                     {"fnr", r.fnr},
                     {"fpr_upper", r.fpr_upper},
                     {"fnr_upper", r.fnr_upper}}}};
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("mechanism       = {} (mis-specify: {})\n", a.p.mechanism, a.p.mis_specify);
    fmt::print("epsilon_claimed = {:.6g} at delta = {:.6g}\n", r.epsilon_claimed, r.delta);
    fmt::print("epsilon_lower   = {:.6g} (confidence {}, {} samples per input, {} sets)\n",
               r.epsilon_lower, r.confidence, r.samples, r.sets);
    fmt::print("best event      = {} >= {:.6g}: FPR {:.4g} (<= {:.4g}), FNR {:.4g} (<= {:.4g})\n",
               r.statistic, r.threshold, r.fpr, r.fpr_upper, r.fnr, r.fnr_upper);
    fmt::print("refuted         = {}\n", r.refuted ? "yes" : "no");
  }
  refuted_exit(r.refuted, r.epsilon_lower, r.epsilon_claimed);
}

struct DpsgdArgs {
  au::DpSgdAuditParams p;
  bool json = false;
};

void cmd_dpsgd(DpsgdArgs& a) {
  const au::DpSgdAuditReport r = au::audit_dpsgd(a.p);
  if (a.json) {
    ordered_json j{{"mode", "white-box"},
                   {"mis_specify", a.p.mis_specify},
                   {"epsilon_claimed", number(r.epsilon_claimed)},
                   {"epsilon_lower", number(r.epsilon_lower)},
                   {"delta", a.p.delta},
                   {"confidence", a.p.confidence},
                   {"refuted", r.refuted},
                   {"canaries", a.p.canaries},
                   {"included", r.included},
                   {"guesses", r.guesses},
                   {"correct", r.correct},
                   {"steps", a.p.steps},
                   {"noise_multiplier", a.p.noise_multiplier},
                   {"seed", a.p.seed},
                   {"final_loss", r.final_loss}};
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print("DP-SGD audit (one run, white box, {} gradient canaries, {} steps)\n", a.p.canaries,
               a.p.steps);
    fmt::print("epsilon_claimed = {:.6g} at delta = {:.6g}\n", r.epsilon_claimed, a.p.delta);
    fmt::print("epsilon_lower   = {:.6g} (confidence {}; {} of {} guesses correct)\n",
               r.epsilon_lower, a.p.confidence, r.correct, r.guesses);
    fmt::print("refuted         = {}\n", r.refuted ? "yes" : "no");
  }
  refuted_exit(r.refuted, r.epsilon_lower, r.epsilon_claimed);
}

}  // namespace

void add_audit_commands(CLI::App& app) {
  auto* audit = app.add_subcommand("audit", "empirical lower bounds on epsilon");
  audit->require_subcommand(1);

  auto m = std::make_shared<MechanismArgs>();
  auto* c =
      audit->add_subcommand("mechanism", "black-box audit of one mechanism on a neighbour pair");
  c->add_option("--mechanism", m->p.mechanism,
                "gaussian | laplace | analytic-gaussian | discrete-gaussian | discrete-laplace | "
                "svt | dirichlet")
      ->capture_default_str();
  c->add_option("--noise-multiplier,-z", m->p.noise_multiplier, "sigma (or b) / sensitivity");
  c->add_option("--epsilon", m->p.epsilon, "calibrate the mechanism by epsilon");
  c->add_option("--concentration", m->p.concentration, "Dirichlet k")->capture_default_str();
  c->add_option("--claim-epsilon", m->p.claim_epsilon,
                "claimed epsilon (default: the mechanism's own accounting)");
  c->add_option("--delta", m->p.delta, "delta of the claim (default 1e-5; 0 for Laplace, svt)");
  c->add_option("--dim", m->p.dim, "output dimension")->capture_default_str();
  c->add_flag("--secure", m->p.secure, "exact discrete noise with snapping");
  c->add_option("--samples", m->p.samples, "runs per input")->capture_default_str();
  c->add_option("--seed", m->p.seed, "root seed")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  c->add_option("--confidence", m->p.confidence, "confidence of the bound")->capture_default_str();
  c->add_option("--pair", m->pair, "neighbouring inputs x0,x1 (default 0,1)");
  c->add_option("--mis-specify", m->p.mis_specify,
                "none | halve-noise | quarter-noise | double-sensitivity (claim unchanged)")
      ->capture_default_str();
  c->add_flag("--json", m->json, "print one JSON object");
  c->callback([m] { cmd_mechanism(*m); });

  auto d = std::make_shared<DpsgdArgs>();
  auto* s =
      audit->add_subcommand("dpsgd", "one-run white-box audit of DP-SGD with gradient canaries");
  s->add_option("--canaries", d->p.canaries, "m, each included with probability 1/2")
      ->capture_default_str();
  s->add_flag("--white-box", d->p.white_box, "gradient canaries (the only mode so far)");
  s->add_option("--noise-multiplier,-z", d->p.noise_multiplier, "sigma / C")->capture_default_str();
  s->add_option("--steps", d->p.steps, "full-batch DP-SGD steps")->capture_default_str();
  s->add_option("--examples", d->p.examples, "real training examples")->capture_default_str();
  s->add_option("--guesses", d->p.guesses, "guesses k+ = k- = guesses / 2 (0: m / 5)")
      ->capture_default_str();
  s->add_option("--claim-epsilon", d->p.claim_epsilon, "claimed epsilon (default: accountant)");
  s->add_option("--delta", d->p.delta, "delta")->capture_default_str();
  s->add_option("--seed", d->p.seed, "root seed")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  s->add_option("--confidence", d->p.confidence, "confidence of the bound")->capture_default_str();
  s->add_option("--mis-specify", d->p.mis_specify, "none | halve-noise | double-sensitivity")
      ->capture_default_str();
  s->add_flag("--json", d->json, "print one JSON object");
  s->callback([d] { cmd_dpsgd(*d); });
}

}  // namespace dprl::cli
