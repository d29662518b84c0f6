// dprl privacy epsilon | delta | noise | gaussian | compose | dirichlet | svt-params
//
// Human-readable output by default; --json prints one JSON object. Invalid parameters throw
// dprl::ParamError (cli::main prints "dprl: <message>" and exits 2).
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/error.hpp"
#include "engine/json_number.hpp"
#include "privacy/best_accountant.hpp"
#include "privacy/calibration.hpp"
#include "privacy/composition.hpp"
#include "privacy/dirichlet_mechanism.hpp"
#include "privacy/gaussian_mechanism.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/pld_accountant.hpp"
#include "privacy/rdp_accountant.hpp"
#include "privacy/sparse_vector.hpp"
#include "tools/cli.hpp"

namespace dprl::cli {
namespace {

using nlohmann::ordered_json;
namespace pv = dprl::privacy;

void require_finite(double v, const char* flag) {
  if (std::isnan(v) || std::isinf(v))
    throw ParamError(fmt::format("{} = {} must be finite", flag, v));
}
void require_positive(double v, const char* flag) {
  require_finite(v, flag);
  if (!(v > 0.0)) throw ParamError(fmt::format("{} = {} must be > 0", flag, v));
}
void require_delta(double v, const char* flag) {
  if (!(v > 0.0 && v < 1.0)) throw ParamError(fmt::format("{} = {} must be in (0, 1)", flag, v));
}
void require_rate(double v, const char* flag) {
  if (!(v > 0.0 && v <= 1.0)) throw ParamError(fmt::format("{} = {} must be in (0, 1]", flag, v));
}
void require_count(std::int64_t v, const char* flag) {
  if (v < 1) throw ParamError(fmt::format("{} = {} must be >= 1", flag, v));
}
void require_nonnegative(double v, const char* flag) {
  require_finite(v, flag);
  if (v < 0.0) throw ParamError(fmt::format("{} = {} must be >= 0", flag, v));
}

// A privacy figure in JSON (+inf, the honest bound when nothing finite is certified, as "inf").
// NaN never reaches here: the library refuses it.
ordered_json number(double v) {
  DPRL_CHECK(!std::isnan(v));
  return json_number(v);
}

void print_json(const ordered_json& j) { fmt::print("{}\n", j.dump()); }

struct DpsgdArgs {
  double z = NAN, q = NAN, delta = NAN, epsilon = NAN;
  std::int64_t steps = 0;
  std::string accountant = "rdp";
  bool json = false;
  bool discrete = false;  // the secure noise's discrete Gaussian (epsilon only)
};

// The flags `epsilon` and `delta` share: z, q, T (checked first, in this order).
void require_dpsgd_flags(const DpsgdArgs& a) {
  require_nonnegative(a.z, "--noise-multiplier");
  require_rate(a.q, "--sampling-rate");
  require_count(a.steps, "--steps");
}

// The named accountant with T steps of DP-SGD composed.
std::unique_ptr<pv::Accountant> dpsgd_accountant(const DpsgdArgs& a) {
  auto acc = pv::make_accountant(a.accountant);
  acc->compose(pv::dpsgd_event(
      {.noise_multiplier = a.z, .sampling_rate = a.q, .steps = a.steps, .discrete = a.discrete}));
  return acc;
}

// `privacy epsilon` (want_delta false: epsilon at --delta) and `privacy delta` (delta at
// --epsilon) of T DP-SGD steps: any registered accountant gives the figure and its name, the
// built-in ones add their details.
void print_dpsgd_figure(const DpsgdArgs& a, bool want_delta) {
  require_dpsgd_flags(a);
  if (want_delta) {
    require_nonnegative(a.epsilon, "--epsilon");
  } else {
    require_delta(a.delta, "--delta");
  }
  pv::check_accountant_name(a.accountant, "--accountant");
  const auto acc = dpsgd_accountant(a);
  const char* figure = want_delta ? "delta" : "epsilon";
  const char* given = want_delta ? "epsilon" : "delta";
  const double at = want_delta ? a.epsilon : a.delta;
  ordered_json details = ordered_json::object();
  double value;
  if (const auto* rdp = dynamic_cast<const pv::RdpAccountant*>(acc.get())) {
    if (want_delta) {
      const auto r = rdp->delta_and_order(at);
      value = r.delta;
      if (value < 1.0) details["optimal_order"] = r.order;
    } else {
      const auto r = rdp->epsilon_and_order(at);
      value = r.epsilon;
      if (std::isfinite(value)) details["optimal_order"] = r.order;
    }
  } else if (const auto* best = dynamic_cast<const pv::BestAccountant*>(acc.get())) {
    const auto parts = want_delta ? best->delta_parts(at) : best->epsilon_parts(at);
    value = parts.best();
    details[fmt::format("rdp_{}", figure)] = number(parts.rdp);
    details[fmt::format("pld_{}", figure)] = number(parts.pld);
    if (!parts.pld_error.empty()) details["pld_error"] = parts.pld_error;
  } else {
    value = want_delta ? acc->delta(at) : acc->epsilon(at);
    if (dynamic_cast<const pv::PldAccountant*>(acc.get()))
      details["value_discretization_interval"] = pv::kDefaultPldInterval;
  }
  ordered_json j;
  j[figure] = number(value);
  j["accountant"] = a.accountant;
  j.update(details);
  if (a.discrete) j["noise"] = "discrete_gaussian (proven rdp bound; pld has no proven curve)";
  j["noise_multiplier"] = a.z;
  j["sampling_rate"] = a.q;
  j["steps"] = a.steps;
  j[given] = at;
  if (a.json) return print_json(j);
  fmt::print("{} = {:.6g}  ({} accountant{}; z = {}, q = {}, T = {}, {} = {})\n", figure, value,
             a.accountant, a.discrete ? ", discrete Gaussian: proven rdp bound" : "", a.z, a.q,
             a.steps, given, at);
}

void cmd_noise(const DpsgdArgs& a) {
  require_positive(a.epsilon, "--epsilon");
  require_rate(a.q, "--sampling-rate");
  require_count(a.steps, "--steps");
  require_delta(a.delta, "--delta");
  pv::check_accountant_name(a.accountant, "--accountant");
  const double z = pv::calibrate_noise_multiplier(
      {.target_epsilon = a.epsilon, .delta = a.delta, .sampling_rate = a.q, .steps = a.steps},
      a.accountant);
  const double achieved = pv::dpsgd_epsilon(
      {.noise_multiplier = z, .sampling_rate = a.q, .steps = a.steps}, a.delta, a.accountant);
  if (a.json) {
    print_json(ordered_json{{"noise_multiplier", z},
                            {"accountant", a.accountant},
                            {"epsilon", a.epsilon},
                            {"achieved_epsilon", number(achieved)},
                            {"sampling_rate", a.q},
                            {"steps", a.steps},
                            {"delta", a.delta}});
    return;
  }
  fmt::print(
      "noise multiplier z = {:.8g}  (achieves epsilon = {:.6g} <= {} under {}; q = {}, "
      "T = {}, delta = {})\n",
      z, achieved, a.epsilon, a.accountant, a.q, a.steps, a.delta);
}

struct GaussianArgs {
  double epsilon = NAN, delta = NAN, sensitivity = 1.0;
  bool analytic = false, json = false;
};

void cmd_gaussian(const GaussianArgs& a) {
  require_positive(a.epsilon, "--epsilon");
  require_delta(a.delta, "--delta");
  require_positive(a.sensitivity, "--sensitivity");
  const double sigma = a.analytic ? pv::analytic_gaussian_sigma(a.epsilon, a.delta, a.sensitivity)
                                  : pv::classical_gaussian_sigma(a.epsilon, a.delta, a.sensitivity);
  const char* method = a.analytic ? "analytic" : "classical";
  if (a.json) {
    print_json(ordered_json{{"sigma", sigma},
                            {"method", method},
                            {"epsilon", a.epsilon},
                            {"delta", a.delta},
                            {"sensitivity", a.sensitivity},
                            {"noise_multiplier", sigma / a.sensitivity}});
    return;
  }
  fmt::print("sigma = {:.8g}  ({} Gaussian; epsilon = {}, delta = {}, sensitivity = {})\n", sigma,
             method, a.epsilon, a.delta, a.sensitivity);
}

struct ComposeArgs {
  double epsilon = NAN, delta = NAN, slack = NAN;
  std::int64_t count = 0;
  bool json = false;
};

void cmd_compose(const ComposeArgs& a) {
  require_positive(a.epsilon, "--epsilon");
  if (!(a.delta >= 0.0 && a.delta < 1.0)) {
    throw ParamError(fmt::format("--delta = {} must be in [0, 1)", a.delta));
  }
  require_count(a.count, "--count");
  require_delta(a.slack, "--delta-slack");
  const auto basic = pv::basic_composition(a.epsilon, a.delta, a.count);
  const auto adv = pv::advanced_composition(a.epsilon, a.delta, a.count, a.slack);
  if (a.json) {
    print_json(ordered_json{{"basic", {{"epsilon", number(basic.epsilon)}, {"delta", basic.delta}}},
                            {"advanced", {{"epsilon", number(adv.epsilon)}, {"delta", adv.delta}}},
                            {"epsilon0", a.epsilon},
                            {"delta0", a.delta},
                            {"count", a.count},
                            {"delta_slack", a.slack}});
    return;
  }
  fmt::print("basic:    epsilon = {:.8g}, delta = {:.6g}\n", basic.epsilon, basic.delta);
  fmt::print("advanced: epsilon = {:.8g}, delta = {:.6g}  (Dwork-Rothblum-Vadhan, slack {})\n",
             adv.epsilon, adv.delta, a.slack);
}

struct DirichletArgs {
  pv::DirichletParams p;
  double k = NAN, eta = NAN, tau = NAN, lipschitz = NAN, adjacency = NAN;
  int actions = 0;
  std::int64_t samples = 1000000;
  std::uint64_t seed = 0;
  bool json = false;
};

void cmd_dirichlet(DirichletArgs& a) {
  require_positive(a.k, "--k");
  require_positive(a.eta, "--eta");
  require_positive(a.tau, "--tau");
  require_positive(a.lipschitz, "--lipschitz");
  require_positive(a.adjacency, "--adjacency");
  if (a.actions < 2) throw ParamError(fmt::format("--actions = {} must be >= 2", a.actions));
  require_count(a.samples, "--samples");
  // the work bound of dirichlet_report, checked here to name the flags
  if (a.actions > pv::kDirichletMaxActions)
    throw ParamError(
        fmt::format("--actions = {} must be at most {}", a.actions, pv::kDirichletMaxActions));
  const double draws = static_cast<double>(a.samples) * a.actions;
  if (draws > pv::kDirichletMaxDraws)
    throw ParamError(fmt::format(
        "--samples = {} x --actions = {} is {:g} gamma draws; at most {:g} (hours of CPU beyond)",
        a.samples, a.actions, draws, pv::kDirichletMaxDraws));
  a.p = {a.k, a.eta, a.tau, a.actions, a.lipschitz, a.adjacency};
  const pv::DirichletReport r = pv::dirichlet_report(a.p, a.samples, a.seed);
  if (a.json) {
    fmt::print("{}\n", pv::dirichlet_report_json(r));
    return;
  }
  const pv::DeltaEstimate& d = r.delta;
  fmt::print("epsilon = {:.8g}  (eq. 12)\n", r.epsilon);
  fmt::print(
      "delta   = {:.6g}  (Monte Carlo, {} samples; Hoeffding {:.6g}% interval [{:.6g}, "
      "{:.6g}]; certified delta = {:.6g})\n",
      d.estimate, d.samples, 100.0 * d.confidence, d.lower, d.upper, d.upper);
  if (a.actions == 2) fmt::print("delta   = {:.8g}  (exact, Beta CDF, m = 2)\n", r.delta_exact);
}

struct SvtArgs {
  double epsilon = NAN, delta = NAN, pmin = NAN;
  std::int64_t queries = 0, max_length = 0;
  bool json = false;
};

void cmd_svt(const SvtArgs& a) {
  require_positive(a.epsilon, "--epsilon");
  require_delta(a.delta, "--delta");
  require_count(a.queries, "--queries");
  require_count(a.max_length, "--max-length");
  require_rate(a.pmin, "--pmin");
  const auto s = pv::svt_params({a.epsilon, a.delta, a.queries, a.max_length, a.pmin});
  if (a.json) {
    fmt::print("{}\n", pv::svt_pieces_json(s));
    return;
  }
  fmt::print("epsilon'        = {:.8g}\n", s.eps_prime);
  fmt::print("delta'          = {:.8g}\n", s.delta_prime);
  fmt::print("c_min           = {:.8g}\n", s.c_min);
  fmt::print("theta           = {:.8g}\n", s.theta);
  fmt::print("threshold shift = {:.8g}  ((4/epsilon') log(1/delta'))\n", s.threshold_shift);
  fmt::print("noise scales    = Lap({:.6g}) on the threshold, Lap({:.6g}) per query\n",
             s.threshold_noise_scale, s.query_noise_scale);
  fmt::print(
      "composed        = ({:.6g}, {:.6g})-DP over {} trajectories (Thm 5.3 + advanced "
      "composition)\n",
      s.composed_epsilon, s.composed_delta, a.queries);
}

}  // namespace

void add_privacy_commands(CLI::App& app) {
  auto* priv = app.add_subcommand("privacy", "privacy accounting and mechanism parameters");
  priv->require_subcommand(1);

  // `epsilon` and `delta` share every option but their target (added after --steps)
  const auto dpsgd_subcommand = [priv](const char* name, const char* about, DpsgdArgs& a,
                                       const auto& target) {
    auto* c = priv->add_subcommand(name, about);
    c->add_option("--noise-multiplier,-z", a.z, "noise multiplier z = sigma / C")->required();
    c->add_option("--sampling-rate,-q", a.q, "Poisson sampling rate q")->required();
    c->add_option("--steps,-T", a.steps, "number of steps T")->required();
    target(c);
    c->add_option("--accountant", a.accountant, pv::accountant_names(" | "))->capture_default_str();
    c->add_flag("--json", a.json, "print one JSON object");
    c->add_flag("--discrete", a.discrete,
                "discrete Gaussian noise (os-entropy runs): the bound proven for it");
    return c;
  };
  auto eps_args = std::make_shared<DpsgdArgs>();
  dpsgd_subcommand(
      "epsilon", "epsilon of T steps of the Poisson-subsampled Gaussian", *eps_args,
      [&](CLI::App* c) { c->add_option("--delta", eps_args->delta, "target delta")->required(); })
      ->callback([eps_args] { print_dpsgd_figure(*eps_args, false); });
  auto delta_args = std::make_shared<DpsgdArgs>();
  dpsgd_subcommand("delta",
                   "smallest delta of T steps of the Poisson-subsampled Gaussian at an epsilon",
                   *delta_args,
                   [&](CLI::App* c) {
                     c->add_option("--epsilon", delta_args->epsilon, "epsilon (>= 0)")->required();
                   })
      ->callback([delta_args] { print_dpsgd_figure(*delta_args, true); });

  auto noise_args = std::make_shared<DpsgdArgs>();
  auto* n = priv->add_subcommand("noise", "smallest noise multiplier reaching a target epsilon");
  n->add_option("--epsilon", noise_args->epsilon, "target epsilon")->required();
  n->add_option("--sampling-rate,-q", noise_args->q, "Poisson sampling rate q")->required();
  n->add_option("--steps,-T", noise_args->steps, "number of steps T")->required();
  n->add_option("--delta", noise_args->delta, "target delta")->required();
  n->add_option("--accountant", noise_args->accountant, pv::accountant_names(" | "))
      ->capture_default_str();
  n->add_flag("--json", noise_args->json, "print one JSON object");
  n->callback([noise_args] { cmd_noise(*noise_args); });

  auto g_args = std::make_shared<GaussianArgs>();
  auto* g = priv->add_subcommand("gaussian", "sigma of the Gaussian mechanism");
  g->add_option("--epsilon", g_args->epsilon, "epsilon")->required();
  g->add_option("--delta", g_args->delta, "delta")->required();
  g->add_option("--sensitivity", g_args->sensitivity, "L2 sensitivity")->capture_default_str();
  g->add_flag("--analytic", g_args->analytic, "analytic Gaussian (Balle and Wang 2018)");
  g->add_flag("--json", g_args->json, "print one JSON object");
  g->callback([g_args] { cmd_gaussian(*g_args); });

  auto c_args = std::make_shared<ComposeArgs>();
  auto* c = priv->add_subcommand("compose", "basic and advanced composition of K mechanisms");
  c->add_option("--epsilon", c_args->epsilon, "per-mechanism epsilon")->required();
  c->add_option("--delta", c_args->delta, "per-mechanism delta")->required();
  c->add_option("--count", c_args->count, "number of mechanisms K")->required();
  c->add_option("--delta-slack", c_args->slack, "advanced composition slack delta'")->required();
  c->add_flag("--json", c_args->json, "print one JSON object");
  c->callback([c_args] { cmd_compose(*c_args); });

  auto d_args = std::make_shared<DirichletArgs>();
  auto* d = priv->add_subcommand("dirichlet", "epsilon and delta of the Dirichlet mechanism");
  d->add_option("--k", d_args->k, "concentration k")->required();
  d->add_option("--eta", d_args->eta, "minimum input entry eta")->required();
  d->add_option("--tau", d_args->tau, "output threshold tau")->required();
  d->add_option("--actions", d_args->actions, "number of actions m")->required();
  d->add_option("--lipschitz", d_args->lipschitz, "Lipschitz constant L")->required();
  d->add_option("--adjacency", d_args->adjacency, "adjacency distance b")->required();
  d->add_option("--samples", d_args->samples, "Monte Carlo samples for delta")
      ->capture_default_str();
  d->add_option("--seed", d_args->seed, "Monte Carlo seed")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  d->add_flag("--json", d_args->json, "print one JSON object");
  d->callback([d_args] { cmd_dirichlet(*d_args); });

  auto s_args = std::make_shared<SvtArgs>();
  auto* s = priv->add_subcommand("svt-params", "PrefixQuery / DataRelease parameters (paper 000)");
  s->add_option("--epsilon", s_args->epsilon, "epsilon1 of the data release")->required();
  s->add_option("--delta", s_args->delta, "delta1 of the data release")->required();
  s->add_option("--queries", s_args->queries, "T, trajectories examined")->required();
  s->add_option("--max-length", s_args->max_length, "L, longest trajectory")->required();
  s->add_option("--pmin", s_args->pmin, "minimum action probability p_min")->required();
  s->add_flag("--json", s_args->json, "print one JSON object");
  s->callback([s_args] { cmd_svt(*s_args); });
}

}  // namespace dprl::cli
