// dprl.run / dprl.sweep: the experiment runner of `dprl run` and `dprl sweep` (algos/run/), with
// the GIL released while training; returns summary.json's content as a dict.
//
// A config is a file path (an experiment or a pipeline file, as `dprl run` takes) or a dict with
// the same keys as the YAML; a dict's values keep their place in error messages
// ("config['algo']['params']['gamma']").
#include <fmt/format.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "algos/run/experiment.hpp"
#include "algos/run/pipeline.hpp"
#include "algos/run/sweep.hpp"
#include "engine/config.hpp"
#include "engine/error.hpp"
#include "engine/run_dir.hpp"
#include "engine/thread_pool.hpp"
#include "python/src/bindings.hpp"

namespace dprl::python {
namespace {

// A Python value as a config tree; `where` names its place.
Node to_node(const py::handle& v, const std::string& where) {
  if (v.is_none()) return Node::null(where);
  if (PyDict_Check(v.ptr())) {
    Node n = Node::map(where);
    for (auto [k, x] : py::reinterpret_borrow<py::dict>(v)) {
      const std::string key = py::str(k);
      n.set(key, to_node(x, fmt::format("{}['{}']", where, key)));
    }
    return n;
  }
  if (PyList_Check(v.ptr()) || PyTuple_Check(v.ptr())) {
    Node n = Node::seq(where);
    std::size_t i = 0;
    for (auto x : py::reinterpret_borrow<py::sequence>(v))
      n.push(to_node(x, fmt::format("{}[{}]", where, i++)));
    return n;
  }
  if (!PyBool_Check(v.ptr()) && !PyUnicode_Check(v.ptr()) && !PyIndex_Check(v.ptr()) &&
      !py::hasattr(v, "__float__"))
    throw ConfigError(fmt::format("{}: a {} is not a number, bool, string, list or dict", where,
                                  std::string(py::str(v.get_type().attr("__name__")))));
  return Node::scalar(param_text(v, where, ""), where);
}

py::dict summary_dict(const RunSummary& s) {
  py::dict d = json_loads(summary_json(s));
  d["dir"] = s.dir;
  d["wall_time_s"] = s.wall_time_s;
  return d;
}

algos::RunOptions run_options(const py::object& seed, const py::object& out,
                              const std::vector<std::string>& set, bool quiet, bool check,
                              bool force) {
  algos::RunOptions opts;
  if (!seed.is_none()) {
    const auto s = seed.cast<std::int64_t>();
    if (s < 0 || s > (std::int64_t{1} << 62))
      throw ParamError(fmt::format("seed = {} must be in [0, 2^62]", s));
    opts.seed = static_cast<std::uint64_t>(s);
  }
  if (!out.is_none()) opts.out = out.cast<std::filesystem::path>();
  opts.overrides = set;
  opts.check_only = check;
  opts.force = force;
  if (quiet) opts.progress = Progress::Mode::kOff;
  return opts;
}

py::dict run(const py::object& config, const py::object& seed, const py::object& out,
             const std::vector<std::string>& set, bool quiet, bool check, int jobs, bool force) {
  const algos::RunOptions opts = run_options(seed, out, set, quiet, check, force);
  if (PyDict_Check(config.ptr())) {
    const Node tree = to_node(config, "config");
    RunSummary s;
    {
      py::gil_scoped_release release;
      s = algos::run_experiment(tree, "experiment", opts);
    }
    return summary_dict(s);
  }
  const auto file = config.cast<std::filesystem::path>();
  RunSummary s;
  {
    py::gil_scoped_release release;
    if (algos::is_pipeline(load_yaml_file(file))) {
      if (check)
        throw ConfigError(fmt::format(
            "{}: check covers experiment files; a pipeline file's stages are checked when it runs",
            file.string()));
      algos::PipelineOptions po;
      po.jobs = jobs > 0 ? jobs : hardware_threads();
      po.progress = opts.progress;
      s = algos::run_pipeline_file(file, opts, po);
    } else {
      s = algos::run_experiment_file(file, opts);
    }
  }
  return summary_dict(s);
}

py::dict sweep(const std::filesystem::path& file, int jobs, bool force, bool quiet) {
  if (jobs < 1 || jobs > 4096)
    throw ParamError(fmt::format("jobs = {} must be in [1, 4096]", jobs));
  algos::SweepOptions opts;
  opts.jobs = jobs;
  opts.force = force;
  opts.quiet = quiet;
  std::optional<algos::SweepPlan> plan;
  algos::SweepResult r;
  {
    py::gil_scoped_release release;
    plan = algos::plan_sweep(file);
    r = algos::run_sweep(*plan, opts);
  }
  py::list runs;
  auto json = py::module_::import("json");
  for (std::size_t i = 0; i < plan->runs.size(); ++i) {
    const auto& o = r.outcomes[i];
    py::dict d;
    d["label"] = plan->runs[i].label;
    d["seed"] = plan->runs[i].seed;
    d["dir"] = plan->runs[i].out.string();
    const char* status[] = {"pending", "done", "skipped", "failed"};
    d["status"] = status[static_cast<int>(o.status)];
    d["summary"] = o.summary.empty() ? py::object(py::none()) : json.attr("loads")(o.summary);
    d["error"] = o.error;
    runs.append(d);
  }
  py::dict d;
  d["out"] = plan->out.string();
  d["runs"] = runs;
  d["best_label"] = r.best_label;
  d["summary_md"] = r.summary_md;
  d["table_csv"] = r.table_csv;
  d["ran"] = r.ran;
  d["skipped"] = r.skipped;
  d["failed"] = r.failed;
  return d;
}

}  // namespace

void bind_run(py::module_& m) {
  m.def("run", &run, py::arg("config"), py::kw_only(), py::arg("seed") = py::none(),
        py::arg("out") = py::none(), py::arg("set") = std::vector<std::string>{},
        py::arg("quiet") = false, py::arg("check") = false, py::arg("jobs") = 0,
        py::arg("force") = false,
        "Runs an experiment (file or dict) as `dprl run` does; returns summary.json as a dict");
  m.def("sweep", &sweep, py::arg("file"), py::kw_only(), py::arg("jobs") = 1,
        py::arg("force") = false, py::arg("quiet") = false,
        "Runs a sweep file as `dprl sweep` does; returns every run's summary and the tables");
}

}  // namespace dprl::python
