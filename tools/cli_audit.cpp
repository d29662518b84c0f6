// dprl audit mechanism | dpsgd: empirical lower bounds on epsilon (docs/privacy_audit.md).
//
// Exit status: 0 when the claim stands, 3 when the audit refutes it (epsilon_lower >
// epsilon_claimed; reported on stderr too), 2 on bad input (one line naming the flag).
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "algos/audit/audited_record.hpp"
#include "algos/run/experiment.hpp"
#include "algos/run/selective_audit.hpp"
#include "engine/config.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/sha256.hpp"
#include "privacy/mechanism_audit.hpp"
#include "privacy/one_run_audit.hpp"
#include "tools/cli.hpp"

namespace dprl::cli {
namespace {

namespace au = dprl::privacy::audit;

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
    fmt::print("{}\n", au::mechanism_audit_json(a.p, r));
  } else {
    fmt::print("mechanism       = {} (mis-specify: {}, attack: {})\n", a.p.mechanism,
               a.p.mis_specify, r.attack);
    fmt::print("epsilon_claimed = {:.6g} at delta = {:.6g}\n", r.epsilon_claimed, r.delta);
    fmt::print("epsilon_lower   = {:.6g} (confidence {}, {} samples per input, {} sets)\n",
               r.epsilon_lower, r.confidence, r.samples, r.sets);
    fmt::print("best event      = {} >= {:.6g}: FPR {:.4g} (<= {:.4g}), FNR {:.4g} (<= {:.4g})\n",
               r.statistic, r.threshold, r.fpr, r.fpr_upper, r.fnr, r.fnr_upper);
    fmt::print("refuted         = {}\n", r.refuted ? "yes" : "no");
  }
  refuted_exit(r.refuted, r.epsilon_lower, r.epsilon_claimed);
}

struct AuditDpsgdArgs {
  au::DpSgdAuditParams p;
  bool json = false;
  std::string config;             // an experiment: audit its learner
  std::vector<std::string> sets;  // overrides of that experiment
  CLI::App* cmd = nullptr;
};

// The flags given on the command line as overrides of the experiment's `audit:` section.
std::vector<std::string> audit_overrides(const CLI::App& cmd, const au::DpSgdAuditParams& p,
                                         std::vector<std::string> sets, bool canaries_steps) {
  auto given = [&](const char* name) { return cmd.get_option(name)->count() > 0; };
  for (const char* f : {"--noise-multiplier", "--examples", "--claim-epsilon", "--delta"})
    if (given(f))
      throw ParamError(fmt::format(
          "{} applies to the synthetic DP-SGD audit; an experiment's learner is audited with its "
          "own settings (change them with --set algo.params.KEY=VALUE)",
          f));
  if (given("--canaries")) sets.push_back(fmt::format("audit.canaries={}", p.canaries));
  if (given("--white-box")) sets.push_back("audit.white_box=true");
  if (given("--guesses")) sets.push_back(fmt::format("audit.guesses={}", p.guesses));
  if (given("--seed")) sets.push_back(fmt::format("audit.seed={}", p.seed));
  if (given("--confidence")) sets.push_back(fmt::format("audit.confidence={}", p.confidence));
  if (given("--mis-specify")) sets.push_back(fmt::format("audit.mis_specify={}", p.mis_specify));
  if (canaries_steps && given("--steps")) sets.push_back(fmt::format("audit.steps={}", p.steps));
  return sets;
}

// Reads a whole file (DataError naming it when it cannot be read).
std::string read_text(const std::filesystem::path& f) {
  std::ifstream in(f, std::ios::binary);
  if (!in) throw DataError(fmt::format("{}: cannot be read", f.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void print_report(const algos::AuditReport& r, bool json) {
  if (json)
    fmt::print("{}\n", algos::audit_report_json(r));
  else
    fmt::print("{}", algos::audit_report_text(r));
}

// The learners `dprl audit dpsgd CONFIG` takes: those that train with DP-SGD (user-level, or
// DP-FedAvg over trajectories); the others are audited from their runs.
void check_dpsgd_learner(const Node& cfg) {
  const Node* algo = cfg.find("algo");
  const Node* id = algo && algo->is_map() ? algo->find("id") : nullptr;
  if (!id) return;  // the experiment's own parsing reports it
  const std::string name = id->as_string("algo.id");
  for (const char* ok : {"bc", "discrete_cql", "discrete_bcq", "primorl"})
    if (name == ok) return;
  throw ParamError(fmt::format(
      "dprl audit dpsgd: algo '{}' does not train with DP-SGD; audit it with an audit: section "
      "in dprl run, or dprl audit run RUN_DIR",
      name));
}

void cmd_dpsgd_config(AuditDpsgdArgs& a) {
  algos::RunOptions opts;
  opts.write = false;
  opts.progress = Progress::Mode::kOff;
  opts.overrides = audit_overrides(*a.cmd, a.p, a.sets, true);
  const std::filesystem::path file(a.config);
  const Node cfg = load_yaml_file(file);
  algos::AuditReport r;
  if (algos::is_pipeline(cfg)) {
    // the expert-level pipeline's DP-SGD part: its population and release must exist
    const algos::PipelineSpec spec =
        algos::parse_pipeline(cfg, file.stem().string(), file.parent_path(), opts);
    algos::PipelineOptions po;
    po.progress = Progress::Mode::kOff;
    r = algos::audit_pipeline(spec, po, spec.audit.value_or(algos::AuditParams{}), NAN);
  } else {
    check_dpsgd_learner(cfg);
    r = algos::audit_experiment(cfg, file.stem().string(), opts);
  }
  print_report(r, a.json);
  refuted_exit(r.refuted, r.epsilon_lower, r.epsilon_claimed);
}

void cmd_dpsgd(AuditDpsgdArgs& a) {
  if (!a.config.empty()) return cmd_dpsgd_config(a);
  for (const char* f : {"--set"})
    if (a.cmd->get_option(f)->count() > 0)
      throw ParamError("--set needs an experiment file (dprl audit dpsgd CONFIG.yaml --set ...)");
  const au::DpSgdAuditReport r = au::audit_dpsgd(a.p);
  if (a.json) {
    fmt::print("{}\n", au::dpsgd_audit_json(a.p, r));
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

struct RunAuditArgs {
  std::string dir;
  au::DpSgdAuditParams p;  // only the flags that map to the audit section
  std::vector<std::string> sets;
  bool json = false;
  CLI::App* cmd = nullptr;
};

// dprl audit run RUN_DIR: audit a finished run's configuration, write audit.json and the
// summary's "audit" object (both atomically).
void cmd_audit_run(RunAuditArgs& a) {
  namespace fs = std::filesystem;
  const fs::path dir(a.dir);
  const fs::path config = dir / "config.yaml", summary = dir / "summary.json";
  if (!fs::is_directory(dir)) throw DataError(fmt::format("{}: not a run directory", a.dir));
  if (!fs::exists(config) || !fs::exists(summary))
    throw DataError(fmt::format(
        "{}: needs config.yaml and summary.json (a finished `dprl run` directory)", a.dir));
  auto sum = nlohmann::ordered_json::parse(read_text(summary), nullptr, false);
  if (sum.is_discarded() || !sum.is_object())
    throw DataError(fmt::format("{}: not a JSON object", summary.string()));
  if (!sum.contains("privacy") || !sum["privacy"].is_object() ||
      !sum["privacy"].contains("epsilon") || !sum["privacy"]["epsilon"].is_number())
    throw DataError(fmt::format(
        "{}: privacy.epsilon: the run reports no epsilon (not a private run), nothing to audit",
        summary.string()));
  const double reported = sum["privacy"]["epsilon"].get<double>();
  algos::RunOptions opts;
  opts.write = false;
  opts.progress = Progress::Mode::kOff;
  opts.overrides = audit_overrides(*a.cmd, a.p, a.sets, true);
  const Node cfg = load_yaml_file(config);
  algos::AuditReport r;
  if (algos::is_pipeline(cfg)) {
    const algos::PipelineSpec spec = algos::pipeline_spec_of_run(dir, opts.overrides);
    algos::PipelineOptions po;
    po.progress = Progress::Mode::kOff;
    r = algos::audit_pipeline(spec, po, spec.audit.value_or(algos::AuditParams{}), reported);
  } else {
    r = algos::audit_experiment(cfg, dir.filename().string(), opts, reported);
  }
  const std::string text = algos::audit_report_json(r);
  write_file_atomic(dir / "audit.json", text + "\n");
  sum["audit"] = nlohmann::ordered_json::parse(text);
  // the audit trained on the run's protected data again, charged to nothing: the run's record
  // can no longer say formal (algos/audit/audit_report.hpp)
  if (algos::audit_retrains_on_run_data(r))
    sum["privacy"] = nlohmann::ordered_json::parse(algos::mark_audited_json(sum["privacy"].dump()));
  const std::string summary_text = sum.dump(2) + "\n";
  write_file_atomic(summary, summary_text);
  // a pipeline's completion record names its summary's digest: keep it, so that running the
  // pipeline again reuses the finished (audited) run instead of training on the data again
  if (algos::is_pipeline(cfg) && fs::exists(dir / "run.json")) {
    auto rec = nlohmann::ordered_json::parse(read_text(dir / "run.json"), nullptr, false);
    if (rec.is_object() && rec.contains("summary_sha256")) {
      rec["summary_sha256"] = sha256_hex(summary_text);
      write_file_atomic(dir / "run.json", rec.dump(2) + "\n");
    }
  }
  print_report(r, a.json);
  if (!a.json) fmt::print("wrote {} and summary.json \"audit\"\n", (dir / "audit.json").string());
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
                "none | halve-noise | quarter-noise | double-sensitivity | "
                "unnoised-coordinate (claim unchanged)")
      ->capture_default_str();
  c->add_option("--attack", m->p.attack,
                "auto | projection | classifier | both (auto: both for vector outputs, d in "
                "[2, 64])")
      ->capture_default_str();
  c->add_flag("--json", m->json, "print one JSON object");
  c->callback([m] { cmd_mechanism(*m); });

  auto d = std::make_shared<AuditDpsgdArgs>();
  auto* s = audit->add_subcommand(
      "dpsgd",
      "one-run audit of DP-SGD: a synthetic task with gradient canaries, or an experiment's "
      "private DP-SGD learner (offline learners, primorl, the expert-level pipeline) with "
      "canaries");
  d->cmd = s;
  s->add_option("config", d->config,
                "experiment YAML of a private DP-SGD learner (its audit: section; flags "
                "override)");
  s->add_option("--set", d->sets, "override a key of the experiment: a.b.c=value (repeatable)");
  s->add_option("--canaries", d->p.canaries, "m, each included with probability 1/2")
      ->capture_default_str();
  s->add_flag("--white-box", d->p.white_box,
              "gradient canaries (the synthetic task always uses them; experiments default to "
              "black-box canary users)");
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
  s->add_option("--mis-specify", d->p.mis_specify,
                "none | halve-noise | double-sensitivity (experiments also quarter-noise, "
                "near-zero-noise; claim unchanged)")
      ->capture_default_str();
  s->add_flag("--json", d->json, "print one JSON object");
  s->callback([d] { cmd_dpsgd(*d); });

  auto ra = std::make_shared<RunAuditArgs>();
  auto* r = audit->add_subcommand(
      "run", "audit a finished private run's configuration; writes RUN_DIR/audit.json");
  ra->cmd = r;
  r->add_option("run_dir", ra->dir, "run directory (config.yaml, summary.json)")->required();
  r->add_option("--canaries", ra->p.canaries, "canary users, each included w.p. 1/2");
  r->add_flag("--white-box", ra->p.white_box, "Dirac gradient canaries");
  r->add_option("--guesses", ra->p.guesses, "guesses (0: canaries / 5)");
  r->add_option("--seed", ra->p.seed, "seed of the audit");
  r->add_option("--confidence", ra->p.confidence, "confidence of the bound");
  r->add_option("--steps", ra->p.steps, "gradient steps (default: the run's)");
  r->add_option("--mis-specify", ra->p.mis_specify,
                "none | halve-noise | quarter-noise | near-zero-noise | double-sensitivity "
                "(claim unchanged)");
  r->add_option("--set", ra->sets, "override a key of the run's config (repeatable)");
  r->add_flag("--json", ra->json, "print one JSON object");
  // flags of the synthetic audit, refused here with a reason
  r->add_option("--noise-multiplier", ra->p.noise_multiplier, "")->group("");
  r->add_option("--examples", ra->p.examples, "")->group("");
  r->add_option("--claim-epsilon", ra->p.claim_epsilon, "")->group("");
  r->add_option("--delta", ra->p.delta, "")->group("");
  r->callback([ra] { cmd_audit_run(*ra); });
}

}  // namespace dprl::cli
