// dprl.privacy: DpEvents, the accountants, calibration, the Laplace and Gaussian mechanisms with
// their secure release, and the audits; the same library calls as `dprl privacy` and `dprl audit`.
//
// The shortcuts (epsilon, delta, noise_multiplier, gaussian_sigma, compose) check their arguments
// in the order and with the words of `dprl privacy`, naming the keyword where the CLI names its
// flag
// ("sampling_rate = 2 must be in (0, 1]" for "--sampling-rate = 2 must be in (0, 1]").
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "privacy/best_accountant.hpp"
#include "privacy/calibration.hpp"
#include "privacy/composition.hpp"
#include "privacy/dirichlet_mechanism.hpp"
#include "privacy/gaussian_mechanism.hpp"
#include "privacy/laplace_mechanism.hpp"
#include "privacy/mechanism_audit.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/one_run_audit.hpp"
#include "privacy/pld_accountant.hpp"
#include "privacy/rdp_accountant.hpp"
#include "privacy/sparse_vector.hpp"
#include "python/src/bindings.hpp"

namespace dprl::python {
namespace {

namespace pv = dprl::privacy;

// the checks of tools/cli_privacy.cpp, worded alike
void require_finite(double v, const char* name) {
  if (std::isnan(v) || std::isinf(v))
    throw ParamError(fmt::format("{} = {} must be finite", name, v));
}
void require_positive(double v, const char* name) {
  require_finite(v, name);
  if (!(v > 0.0)) throw ParamError(fmt::format("{} = {} must be > 0", name, v));
}
void require_delta(double v, const char* name) {
  if (!(v > 0.0 && v < 1.0)) throw ParamError(fmt::format("{} = {} must be in (0, 1)", name, v));
}
void require_rate(double v, const char* name) {
  if (!(v > 0.0 && v <= 1.0)) throw ParamError(fmt::format("{} = {} must be in (0, 1]", name, v));
}
void require_count(std::int64_t v, const char* name) {
  if (v < 1) throw ParamError(fmt::format("{} = {} must be >= 1", name, v));
}

void require_nonnegative(double v, const char* name) {
  require_finite(v, name);
  if (v < 0.0) throw ParamError(fmt::format("{} = {} must be >= 0", name, v));
}

// The arguments `epsilon` and `delta` share, checked first and in this order.
void require_dpsgd_arguments(double z, double q, std::int64_t steps) {
  require_nonnegative(z, "noise_multiplier");
  require_rate(q, "sampling_rate");
  require_count(steps, "steps");
}

// The named accountant with T steps of DP-SGD composed (call without the GIL).
std::unique_ptr<pv::Accountant> dpsgd_accountant(double z, double q, std::int64_t steps,
                                                 const std::string& accountant, bool discrete) {
  auto acc = pv::make_accountant(accountant);
  acc->compose(pv::dpsgd_event(
      {.noise_multiplier = z, .sampling_rate = q, .steps = steps, .discrete = discrete}));
  return acc;
}

// `dprl privacy epsilon`
double epsilon(double z, double q, std::int64_t steps, double delta, const std::string& accountant,
               bool discrete) {
  require_dpsgd_arguments(z, q, steps);
  require_delta(delta, "delta");
  pv::check_accountant_name(accountant, "accountant");
  py::gil_scoped_release release;
  return dpsgd_accountant(z, q, steps, accountant, discrete)->epsilon(delta);
}

// `dprl privacy delta`
double delta(double z, double q, std::int64_t steps, double eps, const std::string& accountant,
             bool discrete) {
  require_dpsgd_arguments(z, q, steps);
  require_nonnegative(eps, "epsilon");
  pv::check_accountant_name(accountant, "accountant");
  py::gil_scoped_release release;
  return dpsgd_accountant(z, q, steps, accountant, discrete)->delta(eps);
}

// `dprl privacy noise`
double noise_multiplier(double eps, double q, std::int64_t steps, double delta,
                        const std::string& accountant) {
  require_positive(eps, "epsilon");
  require_rate(q, "sampling_rate");
  require_count(steps, "steps");
  require_delta(delta, "delta");
  pv::check_accountant_name(accountant, "accountant");
  py::gil_scoped_release release;
  return pv::calibrate_noise_multiplier(
      {.target_epsilon = eps, .delta = delta, .sampling_rate = q, .steps = steps}, accountant);
}

// `dprl privacy gaussian`
double gaussian_sigma(double eps, double delta, double sensitivity, bool analytic) {
  require_positive(eps, "epsilon");
  require_delta(delta, "delta");
  require_positive(sensitivity, "sensitivity");
  return analytic ? pv::analytic_gaussian_sigma(eps, delta, sensitivity)
                  : pv::classical_gaussian_sigma(eps, delta, sensitivity);
}

// `dprl privacy compose`
py::dict compose(double eps, double delta, std::int64_t count, double slack) {
  require_positive(eps, "epsilon");
  if (!(delta >= 0.0 && delta < 1.0))
    throw ParamError(fmt::format("delta = {} must be in [0, 1)", delta));
  require_count(count, "count");
  require_delta(slack, "delta_slack");
  const auto basic = pv::basic_composition(eps, delta, count);
  const auto adv = pv::advanced_composition(eps, delta, count, slack);
  py::dict d;
  d["basic"] = py::make_tuple(basic.epsilon, basic.delta);
  d["advanced"] = py::make_tuple(adv.epsilon, adv.delta);
  return d;
}

// A copy of values with the mechanism's noise added.
template <class M>
py::array_t<double> release(
    const M& mech, const py::array_t<double, py::array::c_style | py::array::forcecast>& values,
    pv::NoiseSource* noise) {
  py::array_t<double> out(values.request().shape);
  std::copy(values.data(), values.data() + values.size(), out.mutable_data());
  std::unique_ptr<pv::NoiseSource> own;
  if (!noise) {
    own = pv::make_os_entropy_noise(/*secure=*/true);
    noise = own.get();
  }
  mech.release(std::span<double>(out.mutable_data(), static_cast<std::size_t>(out.size())), *noise);
  return out;
}

py::dict plan_dict(const pv::SecurePlan& p) {
  py::dict d;
  d["grid"] = p.grid;
  d["scale"] = p.scale;
  d["inflation"] = p.inflation;
  d["sampler_tv"] = p.sampler_tv;
  return d;
}

double optional(const py::object& v) { return v.is_none() ? NAN : v.cast<double>(); }

}  // namespace

void bind_privacy(py::module_& m) {
  py::class_<pv::DpEvent>(m, "DpEvent",
                          "What a release did to private data (dp_accounting's algebra)")
      .def_static("gaussian", &pv::DpEvent::gaussian, py::arg("noise_multiplier"))
      .def_static("discrete_gaussian", &pv::DpEvent::discrete_gaussian, py::arg("noise_multiplier"))
      .def_static("laplace", &pv::DpEvent::laplace, py::arg("scale"))
      .def_static("poisson_sampled", &pv::DpEvent::poisson_sampled, py::arg("sampling_probability"),
                  py::arg("event"))
      .def_static("self_composed", &pv::DpEvent::self_composed, py::arg("event"), py::arg("count"))
      .def_static("composed", &pv::DpEvent::composed, py::arg("events"))
      .def_static("from_json", &pv::DpEvent::from_json, py::arg("text"))
      .def("to_json", &pv::DpEvent::to_json)
      .def("describe", &pv::DpEvent::describe)
      .def("__eq__", &pv::DpEvent::operator==)
      .def("__repr__", [](const pv::DpEvent& e) { return "DpEvent(" + e.describe() + ")"; });
  m.def(
      "dpsgd_event",
      [](double z, double q, std::int64_t steps, bool discrete) {
        return pv::dpsgd_event(
            {.noise_multiplier = z, .sampling_rate = q, .steps = steps, .discrete = discrete});
      },
      py::kw_only(), py::arg("noise_multiplier"), py::arg("sampling_rate"), py::arg("steps"),
      py::arg("discrete") = false,
      "T steps of DP-SGD: self_composed(poisson_sampled(q, gaussian(z)), T); keywords only");

  py::class_<pv::Accountant>(m, "Accountant", "Turns composed DpEvents into (epsilon, delta)")
      .def_property_readonly("name", &pv::Accountant::name)
      .def("supports", &pv::Accountant::supports, py::arg("event"))
      .def(
          "compose",
          [](pv::Accountant& a, const pv::DpEvent& e, std::int64_t count) {
            py::gil_scoped_release release;
            a.compose(e, count);
          },
          py::arg("event"), py::arg("count") = 1)
      .def(
          "epsilon",
          [](const pv::Accountant& a, double delta) {
            pv::check_delta(delta, "delta");
            py::gil_scoped_release release;
            return a.epsilon(delta);
          },
          py::arg("delta"))
      .def(
          "delta",
          [](const pv::Accountant& a, double epsilon) {
            pv::check_epsilon(epsilon, "epsilon");
            py::gil_scoped_release release;
            return a.delta(epsilon);
          },
          py::arg("epsilon"));
  py::class_<pv::RdpAccountant, pv::Accountant>(m, "RdpAccountant")
      .def(py::init<>())
      .def(
          "epsilon_and_order",
          [](const pv::RdpAccountant& a, double delta) {
            pv::check_delta(delta, "delta");
            const auto r = a.epsilon_and_order(delta);
            return py::make_tuple(r.epsilon, r.order);
          },
          py::arg("delta"))
      .def(
          "delta_and_order",
          [](const pv::RdpAccountant& a, double epsilon) {
            pv::check_epsilon(epsilon, "epsilon");
            const auto r = a.delta_and_order(epsilon);
            return py::make_tuple(r.delta, r.order);
          },
          py::arg("epsilon"));
  py::class_<pv::PldAccountant, pv::Accountant>(m, "PldAccountant").def(py::init<>());
  py::class_<pv::BestAccountant, pv::Accountant>(m, "BestAccountant")
      .def(py::init<>())
      .def(
          "epsilon_parts",
          [](const pv::BestAccountant& a, double delta) {
            pv::check_delta(delta, "delta");
            const auto p = a.epsilon_parts(delta);
            py::dict d;
            d["epsilon"] = p.best();
            d["rdp_epsilon"] = p.rdp;
            d["pld_epsilon"] = p.pld;
            d["pld_error"] = p.pld_error;
            return d;
          },
          py::arg("delta"))
      .def(
          "delta_parts",
          [](const pv::BestAccountant& a, double epsilon) {
            pv::check_epsilon(epsilon, "epsilon");
            py::gil_scoped_release release;
            const auto p = a.delta_parts(epsilon);
            py::gil_scoped_acquire acquire;
            py::dict d;
            d["delta"] = p.best();
            d["rdp_delta"] = p.rdp;
            d["pld_delta"] = p.pld;
            d["pld_error"] = p.pld_error;
            return d;
          },
          py::arg("epsilon"));
  m.def("make_accountant", &pv::make_accountant, py::arg("name"),
        ("a registered accountant: " + pv::accountant_names(" | ")).c_str());
  m.def(
      "accountants",
      [] {
        py::dict d;
        for (const auto& e : pv::accountant_registry().entries()) d[e.name.c_str()] = e.summary;
        return d;
      },
      "the registered accountants: {name: summary}, in registration order");

  m.def("epsilon", &epsilon, py::kw_only(), py::arg("noise_multiplier"), py::arg("sampling_rate"),
        py::arg("steps"), py::arg("delta"), py::arg("accountant") = "rdp",
        py::arg("discrete") = false,
        "epsilon of T steps of the Poisson-subsampled Gaussian (dprl privacy epsilon)");
  m.def("delta", &delta, py::kw_only(), py::arg("noise_multiplier"), py::arg("sampling_rate"),
        py::arg("steps"), py::arg("epsilon"), py::arg("accountant") = "rdp",
        py::arg("discrete") = false,
        "smallest delta of T steps of the Poisson-subsampled Gaussian at epsilon "
        "(dprl privacy delta)");
  m.def("noise_multiplier", &noise_multiplier, py::kw_only(), py::arg("epsilon"),
        py::arg("sampling_rate"), py::arg("steps"), py::arg("delta"), py::arg("accountant") = "rdp",
        "smallest noise multiplier reaching epsilon (dprl privacy noise)");
  m.def("gaussian_sigma", &gaussian_sigma, py::kw_only(), py::arg("epsilon"), py::arg("delta"),
        py::arg("sensitivity") = 1.0, py::arg("analytic") = false,
        "sigma of the Gaussian mechanism (dprl privacy gaussian)");
  m.def("compose", &compose, py::kw_only(), py::arg("epsilon"), py::arg("delta"), py::arg("count"),
        py::arg("delta_slack"),
        "{'basic': (eps, delta), 'advanced': (eps, delta)} (dprl privacy compose)");
  m.def(
      "svt_params",
      [](double epsilon, double delta, std::int64_t queries, std::int64_t max_length,
         double pmin) {
        const pv::SvtPieces pieces = pv::svt_params({epsilon, delta, queries, max_length, pmin});
        return json_loads(pv::svt_pieces_json(pieces));
      },
      py::kw_only(), py::arg("epsilon"), py::arg("delta"), py::arg("queries"),
      py::arg("max_length"), py::arg("pmin") = 0.02,
      "the sparse vector technique's parameters of paper 000's data release "
      "(dprl privacy svt-params --json)");
  m.def(
      "dirichlet",
      [](double k, double eta, double tau, int actions, double lipschitz, double adjacency,
         std::int64_t samples, std::uint64_t seed) {
        const pv::DirichletParams p{k, eta, tau, actions, lipschitz, adjacency};
        std::string text;
        {
          py::gil_scoped_release release;
          text = pv::dirichlet_report_json(pv::dirichlet_report(p, samples, seed));
        }
        return json_loads(text);
      },
      py::kw_only(), py::arg("k"), py::arg("eta"), py::arg("tau"), py::arg("actions"),
      py::arg("lipschitz"), py::arg("adjacency"), py::arg("samples") = 1000000,
      py::arg("seed") = 0,
      "epsilon and delta of the Dirichlet mechanism of paper 003 (dprl privacy dirichlet --json)");
  m.def(
      "steps_within_budget",
      [](const pv::DpEvent& step, double eps, double delta, const std::string& accountant,
         std::int64_t max_steps) {
        py::gil_scoped_release release;
        return pv::steps_within_budget(step, eps, delta, accountant, max_steps);
      },
      py::arg("step"), py::kw_only(), py::arg("epsilon"), py::arg("delta"),
      py::arg("accountant") = "rdp", py::arg("max_steps") = std::int64_t{1} << 53);

  py::class_<pv::NoiseSource>(m, "NoiseSource", "Where a mechanism's randomness comes from")
      .def_property_readonly("name", &pv::NoiseSource::name)
      .def_property_readonly("secure", &pv::NoiseSource::secure);
  m.def("seeded_noise", &pv::make_seeded_noise, py::arg("seed"), py::arg("a") = 0, py::arg("b") = 0,
        py::arg("secure") = false,
        "reproducible noise (experiments only: the seed reveals the noise)");
  m.def("os_entropy_noise", &pv::make_os_entropy_noise, py::arg("secure") = true,
        "ChaCha20 keyed from the OS (deployments)");
  m.def("zero_noise", &pv::make_zero_noise, "always zero: a test double (no privacy at all)");

  py::class_<pv::GaussianMechanism>(m, "GaussianMechanism")
      .def(py::init([](double l2, double eps, double delta, bool analytic) {
             return pv::GaussianMechanism({l2, eps, delta, analytic});
           }),
           py::kw_only(), py::arg("l2_sensitivity") = 1.0, py::arg("epsilon") = 1.0,
           py::arg("delta") = 1e-5, py::arg("analytic") = true)
      .def_property_readonly("sigma", &pv::GaussianMechanism::sigma)
      .def("event", &pv::GaussianMechanism::event)
      .def("secure_plan", [](const pv::GaussianMechanism& g,
                             std::size_t dim) { return plan_dict(g.secure_plan(dim)); })
      .def("release", &release<pv::GaussianMechanism>, py::arg("values"),
           py::arg("noise") = py::none(),
           "values + noise (a copy); default noise: OS entropy, secure (snapped, exact discrete)");
  py::class_<pv::LaplaceMechanism>(m, "LaplaceMechanism")
      .def(py::init([](double l1, double eps) {
             return pv::LaplaceMechanism({l1, eps});
           }),
           py::kw_only(), py::arg("l1_sensitivity") = 1.0, py::arg("epsilon") = 1.0)
      .def_property_readonly("scale", &pv::LaplaceMechanism::scale)
      .def("event", &pv::LaplaceMechanism::event)
      .def("secure_plan", [](const pv::LaplaceMechanism& l,
                             std::size_t dim) { return plan_dict(l.secure_plan(dim)); })
      .def("release", &release<pv::LaplaceMechanism>, py::arg("values"),
           py::arg("noise") = py::none());

  m.def(
      "audit_mechanism",
      [](const std::string& mechanism, const py::object& z, const py::object& eps,
         double concentration, const py::object& claim, const py::object& delta, int dim,
         bool secure, std::int64_t samples, std::uint64_t seed, double confidence,
         const py::object& pair, const std::string& mis_specify, const std::string& attack) {
        pv::audit::MechanismAuditParams p;
        if (!pair.is_none()) {
          const auto xs = pair.cast<std::pair<double, double>>();
          p.has_pair = true;
          p.x0 = xs.first;
          p.x1 = xs.second;
        }
        p.mechanism = mechanism;
        p.noise_multiplier = optional(z);
        p.epsilon = optional(eps);
        p.concentration = concentration;
        p.claim_epsilon = optional(claim);
        p.delta = optional(delta);
        p.dim = dim;
        p.secure = secure;
        p.samples = samples;
        p.seed = seed;
        p.confidence = confidence;
        p.mis_specify = mis_specify;
        p.attack = attack;
        std::string text;
        {
          py::gil_scoped_release release;
          text = pv::audit::mechanism_audit_json(p, pv::audit::audit_mechanism(p));
        }
        return json_loads(text);
      },
      py::kw_only(), py::arg("mechanism") = "gaussian", py::arg("noise_multiplier") = py::none(),
      py::arg("epsilon") = py::none(), py::arg("concentration") = 2.0,
      py::arg("claim_epsilon") = py::none(), py::arg("delta") = py::none(), py::arg("dim") = 1,
      py::arg("secure") = false, py::arg("samples") = 100000, py::arg("seed") = 0,
      py::arg("confidence") = 0.95, py::arg("pair") = py::none(), py::arg("mis_specify") = "none",
      py::arg("attack") = "auto", "black-box audit of one mechanism (dprl audit mechanism)");
  m.def(
      "audit_dpsgd",
      [](std::int64_t canaries, double z, std::int64_t steps, std::int64_t examples,
         std::int64_t guesses, const py::object& claim, double delta, std::uint64_t seed,
         double confidence, const std::string& mis_specify) {
        pv::audit::DpSgdAuditParams p;
        p.canaries = canaries;
        p.noise_multiplier = z;
        p.steps = steps;
        p.examples = examples;
        p.guesses = guesses;
        p.claim_epsilon = optional(claim);
        p.delta = delta;
        p.seed = seed;
        p.confidence = confidence;
        p.mis_specify = mis_specify;
        std::string text;
        {
          py::gil_scoped_release release;
          text = pv::audit::dpsgd_audit_json(p, pv::audit::audit_dpsgd(p));
        }
        return json_loads(text);
      },
      py::kw_only(), py::arg("canaries") = 1000, py::arg("noise_multiplier") = 1.0,
      py::arg("steps") = 10, py::arg("examples") = 256, py::arg("guesses") = 0,
      py::arg("claim_epsilon") = py::none(), py::arg("delta") = 1e-5, py::arg("seed") = 0,
      py::arg("confidence") = 0.95, py::arg("mis_specify") = "none",
      "white-box one-run audit of synthetic DP-SGD (dprl audit dpsgd)");
}

}  // namespace dprl::python
