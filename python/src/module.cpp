// dprl._core: the module, its exception classes and the parameter helpers.
#include <fmt/format.h>

#include <cstdint>
#include <exception>

#include "engine/error.hpp"
#include "engine/version.hpp"
#include "python/src/bindings.hpp"

namespace dprl::python {

std::string param_text(const py::handle& value, const std::string& owner, const std::string& key) {
  if (PyBool_Check(value.ptr())) return value.ptr() == Py_True ? "true" : "false";
  if (PyUnicode_Check(value.ptr())) return value.cast<std::string>();
  if (PyLong_Check(value.ptr()) || (!PyFloat_Check(value.ptr()) && PyIndex_Check(value.ptr())))
    return py::str(py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr())));
  if (PyFloat_Check(value.ptr()) || py::hasattr(value, "__float__")) {
    const double v = py::float_(py::reinterpret_borrow<py::object>(value));
    return format_param(v);
  }
  throw ParamError(fmt::format("{}.{}: a {} is not a number, bool or string", owner, key,
                               std::string(py::str(value.get_type().attr("__name__")))));
}

ParamMap kwargs_to_params(const py::dict& kwargs, const std::string& call) {
  ParamMap out;
  for (auto [k, v] : kwargs) {
    const std::string key = py::str(k);
    const std::string text = param_text(v, call, key);
    param_map_set(out, key, {text, fmt::format("{}({}={})", call, key, text)});
  }
  return out;
}

py::dict params_to_dict(const ParamMap& params) {
  py::dict d;
  for (const auto& [k, v] : params) d[py::str(k)] = v.text;
  return d;
}

namespace {

// A Python exception class dprl.<name> deriving from dprl.Error and the given builtins.
PyObject* make_exception(py::module_& m, const char* name, PyObject* base, py::tuple extra,
                         const char* doc) {
  py::list bases;
  bases.append(py::handle(base));
  for (auto b : extra) bases.append(b);
  const std::string qualified = std::string("dprl.") + name;
  PyObject* cls =
      PyErr_NewExceptionWithDoc(qualified.c_str(), doc, py::tuple(bases).ptr(), nullptr);
  if (!cls) throw py::error_already_set();
  m.add_object(name, py::handle(cls));
  return cls;
}

}  // namespace

}  // namespace dprl::python

PYBIND11_MODULE(_core, m) {
  namespace py = pybind11;
  using namespace dprl::python;
  m.doc() = "dprl's engine from Python: envs, privacy accounting, data sets and runs";
  m.attr("__version__") = dprl::kVersion;

  PyObject* value_error = PyExc_ValueError;
  PyObject* os_error = PyExc_OSError;
  PyObject* base = PyErr_NewExceptionWithDoc("dprl.Error", "Any error dprl reports for bad input",
                                             PyExc_Exception, nullptr);
  if (!base) throw py::error_already_set();
  m.add_object("Error", py::handle(base));
  const py::tuple bad_input = py::make_tuple(py::handle(value_error));
  const py::tuple file_problem = py::make_tuple(py::handle(value_error), py::handle(os_error));
  static PyObject* config_error =
      make_exception(m, "ConfigError", base, bad_input, "A YAML or config problem");
  static PyObject* param_error =
      make_exception(m, "ParamError", base, bad_input, "A parameter out of range or mistyped");
  static PyObject* unknown_name =
      make_exception(m, "UnknownName", base, bad_input, "A name not in a registry");
  static PyObject* data_error =
      make_exception(m, "DataError", base, file_problem, "A malformed or unreadable data file");
  static PyObject* invalid_action =
      make_exception(m, "InvalidAction", base, bad_input, "An action outside the action space");
  static PyObject* budget_exceeded =
      make_exception(m, "BudgetExceeded", base, bad_input, "A charge beyond the privacy budget");
  static PyObject* model_load_error =
      make_exception(m, "ModelLoadError", base, file_problem, "A model that cannot be loaded");
  static PyObject* error = base;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const dprl::ConfigError& e) {
      PyErr_SetString(config_error, e.what());
    } catch (const dprl::ParamError& e) {
      PyErr_SetString(param_error, e.what());
    } catch (const dprl::UnknownName& e) {
      PyErr_SetString(unknown_name, e.what());
    } catch (const dprl::DataError& e) {
      PyErr_SetString(data_error, e.what());
    } catch (const dprl::InvalidAction& e) {
      PyErr_SetString(invalid_action, e.what());
    } catch (const dprl::BudgetExceeded& e) {
      PyErr_SetString(budget_exceeded, e.what());
    } catch (const dprl::ModelLoadError& e) {
      PyErr_SetString(model_load_error, e.what());
    } catch (const dprl::Error& e) {
      PyErr_SetString(error, e.what());
    }
  });

  bind_envs(m);
  auto privacy = m.def_submodule("privacy", "accountants, calibration, mechanisms and audits");
  bind_privacy(privacy);
  auto data = m.def_submodule("data", "offline data sets: Minari folders and D4RL files");
  bind_data(data);
  bind_run(m);
}
