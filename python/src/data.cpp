// dprl.data: Minari folders and D4RL files as numpy arrays (engine/data/dataset_io.hpp), and back.
//
// A loaded Dataset's arrays are read-only views of the C++ arrays (no copy), alive as long as the
// views are; a Dataset built from arrays copies them once into the engine's layout, and its save()
// writes a Minari folder atomically, as `dprl collect` does.
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/data/dataset.hpp"
#include "engine/data/dataset_io.hpp"
#include "engine/error.hpp"
#include "envs/register_envs.hpp"
#include "python/src/bindings.hpp"

namespace dprl::python {
namespace {

using DatasetPtr = std::shared_ptr<Dataset>;

// A read-only view of n rows of `cols` values of T starting at p, owned by `owner`.
template <class T>
py::array view(const T* p, std::size_t n, std::size_t cols, bool matrix, const py::handle& owner,
               py::dtype dtype = py::dtype::of<T>()) {
  std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(n)};
  std::vector<py::ssize_t> strides{static_cast<py::ssize_t>(cols * sizeof(T))};
  if (matrix) {
    shape.push_back(static_cast<py::ssize_t>(cols));
    strides.push_back(sizeof(T));
  }
  py::array a(dtype, shape, strides, p, owner);
  a.attr("setflags")(py::arg("write") = false);
  return a;
}

Space space_from_py(const py::handle& s, const char* what) {
  if (py::hasattr(s, "n") && !s.attr("n").is_none())
    return Space::discrete(s.attr("n").cast<std::int64_t>());
  if (py::hasattr(s, "low") && py::hasattr(s, "high")) {
    auto lo = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(s.attr("low"));
    auto hi =
        py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(s.attr("high"));
    return Space::box(std::vector<double>(lo.data(), lo.data() + lo.size()),
                      std::vector<double>(hi.data(), hi.data() + hi.size()));
  }
  throw ParamError(fmt::format("Dataset: {} must be a dprl.spaces.Discrete or Box", what));
}

py::object space_to_py(const Space& s) {
  auto spaces = py::module_::import("dprl.spaces");
  if (s.is_discrete()) return spaces.attr("Discrete")(s.n);
  return spaces.attr("Box")(py::array(py::cast(s.low)), py::array(py::cast(s.high)));
}

template <class T>
std::vector<T> to_vector(const py::object& a, const char* what) {
  if (a.is_none()) return {};
  auto arr = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!arr) throw DataError(fmt::format("Dataset: {} is not an array of numbers", what));
  return std::vector<T>(arr.data(), arr.data() + arr.size());
}

DatasetPtr from_arrays(const py::object& observations, const py::object& actions,
                       const py::object& rewards, const py::object& terminations,
                       const py::object& truncations, const py::object& episode_starts,
                       const py::object& user_ids, const py::object& seeds,
                       const std::string& env_id, const py::dict& env_params,
                       const py::object& obs_space, const py::object& act_space,
                       const std::string& dataset_id, const py::object& metadata) {
  DatasetInfo info;
  info.env_id = env_id;
  info.dataset_id =
      dataset_id.empty() && !env_id.empty() ? "dprl/" + env_id + "/python-v0" : dataset_id;
  info.env_params = kwargs_to_params(env_params, "Dataset");
  if (!env_id.empty()) {
    auto env = envs::make_env(env_id, info.env_params);
    info.env_id = env->spec().id;  // the registry name (an alias's preset is in the params)
    info.env_params = env->params();
    info.observation_space = env->spec().observation;
    info.action_space = env->spec().action;
  }
  if (!obs_space.is_none()) info.observation_space = space_from_py(obs_space, "observation_space");
  if (!act_space.is_none()) info.action_space = space_from_py(act_space, "action_space");
  if (env_id.empty() && (obs_space.is_none() || act_space.is_none()))
    throw ParamError("Dataset: give env_id, or both observation_space and action_space");
  if (!metadata.is_none())
    info.metadata_json = py::module_::import("json").attr("dumps")(metadata).cast<std::string>();
  DatasetArrays a;
  a.observations = to_vector<float>(observations, "observations");
  a.actions = to_vector<float>(actions, "actions");
  a.rewards = to_vector<float>(rewards, "rewards");
  a.terminations = to_vector<std::uint8_t>(terminations, "terminations");
  a.truncations = to_vector<std::uint8_t>(truncations, "truncations");
  const auto starts = to_vector<std::int64_t>(episode_starts, "episode_starts");
  a.episode_starts.clear();
  for (std::int64_t s : starts) {
    if (s < 0) throw DataError(fmt::format("Dataset: episode_starts holds {} (< 0)", s));
    a.episode_starts.push_back(static_cast<std::size_t>(s));
  }
  const std::size_t episodes = a.episode_starts.empty() ? 0 : a.episode_starts.size() - 1;
  a.user_ids = to_vector<std::int64_t>(user_ids, "user_ids");
  if (user_ids.is_none())  // one trajectory, one unit
    for (std::size_t e = 0; e < episodes; ++e) a.user_ids.push_back(static_cast<std::int64_t>(e));
  a.seeds = to_vector<std::int64_t>(seeds, "seeds");
  if (seeds.is_none()) a.seeds.assign(episodes, -1);
  auto d =
      std::make_shared<Dataset>(Dataset::from_arrays(std::move(info), std::move(a), "Dataset"));
  d->validate("Dataset");
  return d;
}

py::object metadata_of(const Dataset& d) {
  if (d.info().metadata_json.empty()) return py::dict();
  return json_loads(d.info().metadata_json);
}

}  // namespace

void bind_data(py::module_& m) {
  py::class_<Dataset, DatasetPtr>(m, "Dataset",
                                  "Whole episodes with the privacy unit (user id) of each")
      .def(py::init(&from_arrays), py::kw_only(), py::arg("observations"), py::arg("actions"),
           py::arg("rewards"), py::arg("terminations"), py::arg("truncations"),
           py::arg("episode_starts"), py::arg("user_ids") = py::none(),
           py::arg("seeds") = py::none(), py::arg("env_id") = "",
           py::arg("env_params") = py::dict(), py::arg("observation_space") = py::none(),
           py::arg("action_space") = py::none(), py::arg("dataset_id") = "",
           py::arg("metadata") = py::none())
      .def_property_readonly("num_episodes", &Dataset::num_episodes)
      .def_property_readonly("num_transitions", &Dataset::num_transitions)
      .def("__len__", &Dataset::num_episodes)
      .def_property_readonly("observations",
                             [](py::object self) {
                               auto& d = self.cast<Dataset&>();
                               return view(d.observations().data(),
                                           d.num_transitions() + d.num_episodes(), d.obs_dim(),
                                           true, self);
                             })
      .def_property_readonly("actions",
                             [](py::object self) {
                               auto& d = self.cast<Dataset&>();
                               return view(d.actions().data(), d.num_transitions(), d.act_dim(),
                                           true, self);
                             })
      .def_property_readonly("rewards",
                             [](py::object self) {
                               auto& d = self.cast<Dataset&>();
                               return view(d.rewards().data(), d.num_transitions(), 1, false, self);
                             })
      .def_property_readonly("terminations",
                             [](py::object self) {
                               auto& d = self.cast<Dataset&>();
                               return view(d.terminations().data(), d.num_transitions(), 1, false,
                                           self, py::dtype("bool"));
                             })
      .def_property_readonly("truncations",
                             [](py::object self) {
                               auto& d = self.cast<Dataset&>();
                               return view(d.truncations().data(), d.num_transitions(), 1, false,
                                           self, py::dtype("bool"));
                             })
      .def_property_readonly("user_ids",
                             [](py::object self) {
                               auto& d = self.cast<Dataset&>();
                               return view(d.user_ids().data(), d.num_episodes(), 1, false, self);
                             })
      .def_property_readonly(
          "seeds",
          [](const Dataset& d) {
            py::array_t<std::int64_t> a(static_cast<py::ssize_t>(d.num_episodes()));
            for (std::size_t e = 0; e < d.num_episodes(); ++e)
              a.mutable_data()[e] = d.episode_seed(e);
            return a;
          })
      .def_property_readonly("episode_starts",
                             [](const Dataset& d) {
                               const auto n = d.num_episodes();
                               py::array_t<std::int64_t> a(static_cast<py::ssize_t>(n + 1));
                               for (std::size_t e = 0; e <= n; ++e)
                                 a.mutable_data()[e] = static_cast<std::int64_t>(
                                     e < n ? d.episode_start(e) : d.num_transitions());
                               return a;
                             })
      .def(
          "episode",
          [](py::object self, std::size_t e) {
            auto& d = self.cast<Dataset&>();
            if (e >= d.num_episodes())
              throw ParamError(fmt::format("episode {} is not below {}", e, d.num_episodes()));
            const std::size_t t0 = d.episode_start(e), n = d.episode_length(e);
            py::dict out;
            out["observations"] = view(d.observations().data() + (t0 + e) * d.obs_dim(), n + 1,
                                       d.obs_dim(), true, self);
            out["actions"] =
                view(d.actions().data() + t0 * d.act_dim(), n, d.act_dim(), true, self);
            out["rewards"] = view(d.rewards().data() + t0, n, 1, false, self);
            out["terminations"] =
                view(d.terminations().data() + t0, n, 1, false, self, py::dtype("bool"));
            out["truncations"] =
                view(d.truncations().data() + t0, n, 1, false, self, py::dtype("bool"));
            out["user_id"] = d.user_id(e);
            out["seed"] = d.episode_seed(e);
            return out;
          },
          py::arg("index"), "Episode e's arrays (views) with its user id and seed")
      .def("users", &Dataset::users, "The distinct user ids, ascending")
      .def_property_readonly("dataset_id", [](const Dataset& d) { return d.info().dataset_id; })
      .def_property_readonly("env_id", [](const Dataset& d) { return d.info().env_id; })
      .def_property_readonly("env_params",
                             [](const Dataset& d) { return params_to_dict(d.info().env_params); })
      .def_property_readonly(
          "observation_space",
          [](const Dataset& d) { return space_to_py(d.info().observation_space); })
      .def_property_readonly("action_space",
                             [](const Dataset& d) { return space_to_py(d.info().action_space); })
      .def_property_readonly("metadata", &metadata_of)
      .def(
          "validate", [](const Dataset& d) { d.validate("Dataset"); },
          "Checks every value against the spaces and the flags' rules (DataError)")
      .def(
          "save",
          [](const Dataset& d, const std::filesystem::path& dir, bool overwrite) {
            py::gil_scoped_release release;
            save_minari(d, dir, SaveOptions{overwrite});
          },
          py::arg("path"), py::kw_only(), py::arg("overwrite") = false,
          "Writes a Minari dataset folder (atomically)")
      .def("__repr__", [](const Dataset& d) {
        return fmt::format("<dprl.data.Dataset {} on {}: {} episodes, {} transitions>",
                           d.info().dataset_id, d.info().env_id, d.num_episodes(),
                           d.num_transitions());
      });

  m.def(
      "load",
      [](const std::filesystem::path& path, const std::string& format,
         const std::string& user_id_key, std::int64_t max_episode_steps) {
        LoadOptions o;
        o.format = parse_dataset_format(format);
        o.d4rl.user_id_key = user_id_key;
        o.d4rl.max_episode_steps = max_episode_steps;
        py::gil_scoped_release release;
        return std::make_shared<Dataset>(load_dataset(path, o));
      },
      py::arg("path"), py::kw_only(), py::arg("format") = "auto", py::arg("user_id_key") = "",
      py::arg("max_episode_steps") = 0,
      "A Minari folder or D4RL file, validated in full (as experiments load it)");
}

}  // namespace dprl::python
