// The Python module `dprl._core`: what the binding files share.
//
// One translation unit per part (envs.cpp, privacy.cpp, data.cpp, run.cpp), each adding its
// functions to the module or a submodule; module.cpp creates the module and the exception classes.
// The bindings call the library's public C++ API (docs/embedding.md), never the CLI.
//
// Errors: the library's typed exceptions (engine/error.hpp) become Python exceptions of the same
// name under `dprl` with the same one-line message (what()); bad input (ParamError, UnknownName,
// ConfigError, InvalidAction, BudgetExceeded) derives from ValueError, file problems (DataError,
// ModelLoadError: a malformed or an unreadable file) from both ValueError and OSError.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "engine/params.hpp"

namespace dprl::python {

namespace py = pybind11;

void bind_envs(py::module_& m);
void bind_privacy(py::module_& m);
void bind_data(py::module_& m);
void bind_run(py::module_& m);

// A Python value as parameter text, the way the CLI's --param would spell it: bool as true/false,
// float as the shortest round-trip decimal, int and str as written.
std::string param_text(const py::handle& value, const std::string& owner, const std::string& key);
// keyword arguments -> ParamMap; each value's place is `<call>(key=value)`.
ParamMap kwargs_to_params(const py::dict& kwargs, const std::string& call);
// ParamMap -> {key: text}.
py::dict params_to_dict(const ParamMap& params);
// A JSON text as the CLI prints it -> Python objects (json.loads: "inf" stays the string "inf",
// as in the CLI's output).
inline py::object json_loads(const std::string& text) {
  return py::module_::import("json").attr("loads")(text);
}

}  // namespace dprl::python
