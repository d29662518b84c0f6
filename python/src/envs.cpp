// dprl.make / dprl.make_vec: the registry's envs with Gymnasium's API (docs/python.md).
//
// Seeds: reset(seed=s) starts episode 0 of root s and reset() the next episode; episode k of root s
// is reset with derive_seed(s, kEnvReset, slot, k), the formula of the engine's own loops
// (engine/vec_env.hpp), slot 0 for make() and slot i for env i of make_vec(). A first reset without
// a seed draws the root from the OS (as Gymnasium does).
// Vector auto-reset is Gymnasium 1.x's default, next-step mode: the step on which env i ends
// returns its final observation and flags; the next step ignores env i's action, resets it and
// returns its first observation with reward 0 and both flags false.
#include <fmt/format.h>
#include <pybind11/numpy.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "envs/register_envs.hpp"
#include "python/src/bindings.hpp"

namespace dprl::python {
namespace {

std::uint64_t entropy_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

std::uint64_t seed_from(const py::handle& seed) {
  if (PyBool_Check(seed.ptr()) || !PyIndex_Check(seed.ptr()))
    throw ParamError(fmt::format("reset: seed = {} must be a non-negative integer or None",
                                 std::string(py::repr(seed))));
  const py::int_ v = py::reinterpret_steal<py::int_>(PyNumber_Index(seed.ptr()));
  if (v < py::int_(0))
    throw ParamError(fmt::format("reset: seed = {} must be a non-negative integer or None",
                                 std::string(py::repr(v))));
  return v.cast<std::uint64_t>();
}

// dprl.spaces.Discrete(n) or Box(low, high) for a Space.
py::object make_space(const Space& s) {
  auto spaces = py::module_::import("dprl.spaces");
  if (s.is_discrete()) return spaces.attr("Discrete")(s.n);
  py::array_t<double> low(static_cast<py::ssize_t>(s.low.size()));
  py::array_t<double> high(static_cast<py::ssize_t>(s.high.size()));
  std::copy(s.low.begin(), s.low.end(), low.mutable_data());
  std::copy(s.high.begin(), s.high.end(), high.mutable_data());
  return spaces.attr("Box")(low, high);
}

// A discrete action from an int or any integer-like (numpy integers).
std::int64_t discrete_action(const py::handle& a, const Space& space) {
  std::int64_t v;
  if (PyLong_Check(a.ptr()) && !PyBool_Check(a.ptr())) {
    int overflow = 0;
    v = PyLong_AsLongLongAndOverflow(a.ptr(), &overflow);
    if (overflow) v = -1;
  } else if (!PyBool_Check(a.ptr()) && !PyFloat_Check(a.ptr()) && PyIndex_Check(a.ptr())) {
    v = py::reinterpret_steal<py::int_>(PyNumber_Index(a.ptr())).cast<std::int64_t>();
  } else {
    throw InvalidAction(fmt::format("action {} is not an integer of {}", std::string(py::repr(a)),
                                    space.describe()));
  }
  if (!space.contains(v))
    throw InvalidAction(fmt::format("action {} is not in {}", v, space.describe()));
  return v;
}

class PyEnv {
 public:
  PyEnv(const std::string& id, const py::kwargs& params)
      : env_(envs::make_env(id, kwargs_to_params(params, "make"))), spec_(env_->spec()) {
    obs_space_ = make_space(spec_.observation);
    act_space_ = make_space(spec_.action);
    scratch_.resize(spec_.observation.dim());
    action_.resize(spec_.action.is_discrete() ? 0 : spec_.action.dim());
    if (spec_.has_action_mask) mask_.resize(spec_.action.n);
  }
  PyEnv(const PyEnv&) = delete;
  PyEnv(PyEnv&&) = default;

  py::tuple reset(const py::object& seed, const py::object& options) {
    if (!seed.is_none()) {
      root_ = seed_from(seed);
      episode_ = 0;
    } else if (!rooted_) {
      root_ = entropy_seed();
      episode_ = 0;
    } else {
      ++episode_;
    }
    rooted_ = started_ = true;
    py::object obs = new_obs();
    env_->reset(derive_seed(root_, Domain::kEnvReset, 0, episode_), obs_span());
    return py::make_tuple(finish_obs(obs), info());
  }

  py::tuple step(const py::handle& action) {
    if (!started_) throw InvalidAction(fmt::format("{}: call reset() before step()", spec_.id));
    py::object obs = new_obs();
    StepResult r;
    if (spec_.action.is_discrete()) {
      r = env_->step(discrete_action(action, spec_.action), obs_span());
    } else {
      read_box_action(action);
      r = env_->step(std::span<const double>(action_), obs_span());
    }
    return py::make_tuple(finish_obs(obs), py::float_(r.reward), py::bool_(r.terminated),
                          py::bool_(r.truncated), info());
  }

  py::array_t<double> state() const {
    const std::vector<double> s = env_->state();
    py::array_t<double> out(static_cast<py::ssize_t>(s.size()));
    std::copy(s.begin(), s.end(), out.mutable_data());
    return out;
  }
  void set_state(const py::array_t<double, py::array::c_style | py::array::forcecast>& s) {
    env_->set_state(std::span<const double>(s.data(), static_cast<std::size_t>(s.size())));
    started_ = true;
  }

  const EnvSpec& spec() const { return spec_; }
  const Env& env() const { return *env_; }
  py::object obs_space_, act_space_;

 private:
  // Box observations are written straight into the array returned; Discrete ones go through
  // scratch_ (the engine writes the index as a float) and come back as an int.
  py::object new_obs() {
    if (spec_.observation.is_discrete()) return py::none();
    py::array_t<float> a(static_cast<py::ssize_t>(scratch_.size()));
    cur_ = a.mutable_data();
    return a;
  }
  std::span<float> obs_span() {
    return spec_.observation.is_discrete() ? std::span<float>(scratch_)
                                           : std::span<float>(cur_, scratch_.size());
  }
  py::object finish_obs(py::object obs) {
    if (!spec_.observation.is_discrete()) return obs;
    return py::int_(static_cast<std::int64_t>(scratch_[0]));
  }
  py::dict info() {
    py::dict d;
    if (spec_.has_action_mask) {
      env_->action_mask(mask_);
      py::array_t<std::int8_t> m(static_cast<py::ssize_t>(mask_.size()));
      std::copy(mask_.begin(), mask_.end(), m.mutable_data());
      d["action_mask"] = m;
    }
    return d;
  }
  void read_box_action(const py::handle& action) {
    const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(action);
    if (!a || static_cast<std::size_t>(a.size()) != action_.size())
      throw InvalidAction(fmt::format("action {} must hold {} numbers for {}",
                                      std::string(py::repr(action)), action_.size(),
                                      spec_.action.describe()));
    std::copy(a.data(), a.data() + a.size(), action_.begin());
  }

  std::unique_ptr<Env> env_;
  EnvSpec spec_;
  std::vector<float> scratch_;
  float* cur_ = nullptr;
  std::vector<double> action_;
  std::vector<std::uint8_t> mask_;
  std::uint64_t root_ = 0, episode_ = 0;
  bool rooted_ = false;   // root_ chosen (by a reset)
  bool started_ = false;  // reset or set_state called: step() may run
};

class PyVecEnv {
 public:
  PyVecEnv(const std::string& id, std::int64_t num_envs, bool copy, const py::kwargs& params)
      : copy_(copy) {
    if (num_envs < 1 || num_envs > (std::int64_t{1} << 20))
      throw ParamError(fmt::format("make_vec: num_envs = {} must be in [1, 1048576]", num_envs));
    const ParamMap p = kwargs_to_params(params, "make_vec");
    for (std::int64_t i = 0; i < num_envs; ++i) envs_.push_back(envs::make_env(id, p));
    spec_ = envs_[0]->spec();
    n_ = envs_.size();
    dim_ = spec_.observation.dim();
    adim_ = spec_.action.dim();
    single_obs_space_ = make_space(spec_.observation);
    single_act_space_ = make_space(spec_.action);
    auto spaces = py::module_::import("dprl.spaces");
    obs_space_ = spaces.attr("batch_space")(single_obs_space_, n_);
    act_space_ = spaces.attr("batch_space")(single_act_space_, n_);
    scratch_.resize(n_ * dim_);
    episode_.assign(n_, 0);
    autoreset_.assign(n_, 0);
    action_.resize(spec_.action.is_discrete() ? 0 : n_ * adim_);
    discrete_action_.resize(n_);
  }
  PyVecEnv(const PyVecEnv&) = delete;
  PyVecEnv(PyVecEnv&&) = default;

  py::tuple reset(const py::object& seed, const py::object& options) {
    if (!seed.is_none() || !started_) {
      root_ = seed.is_none() ? entropy_seed() : seed_from(seed);
      std::fill(episode_.begin(), episode_.end(), 0);
    } else {
      for (auto& e : episode_) ++e;  // a new episode in every slot, same root
    }
    started_ = true;
    std::fill(autoreset_.begin(), autoreset_.end(), 0);
    Out out = outputs();
    for (std::size_t i = 0; i < n_; ++i) reset_slot(i, out.obs);
    finish_obs(out);
    return py::make_tuple(out.obs_array, py::dict());
  }

  py::tuple step(const py::handle& actions) {
    if (!started_) throw InvalidAction(fmt::format("{}: call reset() before step()", spec_.id));
    read_actions(actions);
    Out out = outputs();
    {
      py::gil_scoped_release release;
      for (std::size_t i = 0; i < n_; ++i) {
        if (autoreset_[i]) {
          ++episode_[i];
          reset_slot(i, out.obs);
          out.reward[i] = 0;
          out.terminated[i] = false;
          out.truncated[i] = false;
          autoreset_[i] = 0;
          continue;
        }
        std::span<float> o(out.obs + i * dim_, dim_);
        const StepResult r =
            spec_.action.is_discrete()
                ? envs_[i]->step(discrete_action_[i], o)
                : envs_[i]->step(std::span<const double>(action_.data() + i * adim_, adim_), o);
        out.reward[i] = r.reward;
        out.terminated[i] = r.terminated;
        out.truncated[i] = r.truncated;
        autoreset_[i] = r.terminated || r.truncated;
      }
    }
    finish_obs(out);
    return py::make_tuple(out.obs_array, out.reward_array, out.terminated_array,
                          out.truncated_array, py::dict());
  }

  std::size_t num_envs() const { return n_; }
  const EnvSpec& spec() const { return spec_; }
  py::array_t<double> state(std::size_t i) const {
    if (i >= n_) throw ParamError(fmt::format("state: env index {} is not below {}", i, n_));
    const std::vector<double> s = envs_[i]->state();
    py::array_t<double> out(static_cast<py::ssize_t>(s.size()));
    std::copy(s.begin(), s.end(), out.mutable_data());
    return out;
  }
  py::object obs_space_, act_space_, single_obs_space_, single_act_space_;

 private:
  // The arrays one call returns (new ones with copy=True; the same ones every call otherwise) and
  // raw pointers into them, taken while the GIL is held.
  struct Out {
    py::object obs_array, reward_array, terminated_array, truncated_array;
    float* obs = nullptr;
    double* reward = nullptr;
    bool* terminated = nullptr;
    bool* truncated = nullptr;
  };
  Out outputs() {
    if (!copy_ && kept_.obs_array) return kept_;
    Out o;
    const auto n = static_cast<py::ssize_t>(n_);
    if (spec_.observation.is_discrete()) {
      o.obs_array = py::array_t<std::int64_t>(n);
      o.obs = scratch_.data();
    } else {
      py::array_t<float> a({n, static_cast<py::ssize_t>(dim_)});
      o.obs = a.mutable_data();
      o.obs_array = std::move(a);
    }
    py::array_t<double> r(n);
    py::array_t<bool> te(n), tr(n);
    o.reward = r.mutable_data();
    o.terminated = te.mutable_data();
    o.truncated = tr.mutable_data();
    o.reward_array = std::move(r);
    o.terminated_array = std::move(te);
    o.truncated_array = std::move(tr);
    if (!copy_) kept_ = o;
    return o;
  }
  void finish_obs(Out& out) {
    if (!spec_.observation.is_discrete()) return;
    auto a = py::array_t<std::int64_t>::ensure(out.obs_array);
    std::int64_t* d = a.mutable_data();
    for (std::size_t i = 0; i < n_; ++i) d[i] = static_cast<std::int64_t>(scratch_[i]);
  }
  void reset_slot(std::size_t i, float* obs) {
    envs_[i]->reset(derive_seed(root_, Domain::kEnvReset, i, episode_[i]),
                    std::span<float>(obs + i * dim_, dim_));
  }
  // Every action is checked before any env steps (slots about to auto-reset ignore theirs).
  void read_actions(const py::handle& actions) {
    if (spec_.action.is_discrete()) {
      const auto a =
          py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(actions);
      if (!a || static_cast<std::size_t>(a.size()) != n_ || a.ndim() != 1)
        throw InvalidAction(fmt::format("actions must be {} integers of {} (shape ({},))", n_,
                                        spec_.action.describe(), n_));
      const std::int64_t* d = a.data();
      for (std::size_t i = 0; i < n_; ++i) {
        if (!autoreset_[i] && !spec_.action.contains(d[i]))
          throw InvalidAction(
              fmt::format("actions[{}] = {} is not in {}", i, d[i], spec_.action.describe()));
        discrete_action_[i] = d[i];
      }
      return;
    }
    const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(actions);
    if (!a || static_cast<std::size_t>(a.size()) != n_ * adim_)
      throw InvalidAction(fmt::format("actions must hold {} x {} numbers of {}", n_, adim_,
                                      spec_.action.describe()));
    const double* d = a.data();
    for (std::size_t i = 0; i < n_; ++i)
      for (std::size_t k = 0; k < adim_; ++k)
        if (!autoreset_[i] && !std::isfinite(d[i * adim_ + k]))
          throw InvalidAction(
              fmt::format("actions[{}] holds {}, not a finite number", i, d[i * adim_ + k]));
    std::copy(d, d + n_ * adim_, action_.begin());
  }

  std::vector<std::unique_ptr<Env>> envs_;
  EnvSpec spec_;
  std::size_t n_ = 0, dim_ = 0, adim_ = 0;
  bool copy_ = true;
  bool started_ = false;
  std::uint64_t root_ = 0;
  std::vector<std::uint64_t> episode_;
  std::vector<std::uint8_t> autoreset_;
  std::vector<float> scratch_;
  std::vector<double> action_;
  std::vector<std::int64_t> discrete_action_;
  Out kept_;
};

py::dict spec_dict(const EnvSpec& s, const ParamMap& params) {
  py::dict d;
  d["id"] = s.id;
  d["max_episode_steps"] = s.max_episode_steps;
  d["reward_threshold"] =
      s.has_reward_threshold ? py::object(py::float_(s.reward_threshold)) : py::object(py::none());
  d["params"] = params_to_dict(params);
  return d;
}

}  // namespace

void bind_envs(py::module_& m) {
  py::class_<PyEnv>(m, "Env", "One environment with Gymnasium's API (dprl.make)")
      .def("reset", &PyEnv::reset, py::kw_only(), py::arg("seed") = py::none(),
           py::arg("options") = py::none(),
           "Starts an episode: (obs, info). seed: the root of this and later episodes.")
      .def("step", &PyEnv::step, py::arg("action"), "(obs, reward, terminated, truncated, info)")
      .def_readonly("observation_space", &PyEnv::obs_space_)
      .def_readonly("action_space", &PyEnv::act_space_)
      .def_property_readonly("spec",
                             [](const PyEnv& e) { return spec_dict(e.spec(), e.env().params()); })
      .def_property_readonly("unwrapped", [](py::object self) { return self; })
      .def_property_readonly("elapsed_steps",
                             [](const PyEnv& e) { return e.env().elapsed_steps(); })
      .def_property_readonly("state", &PyEnv::state,
                             "The internal state (what `dprl env replay` takes as state)")
      .def("set_state", &PyEnv::set_state, py::arg("state"),
           "Puts the env into a state and restarts its step counter (exact replay)")
      .def("close", [](PyEnv&) {})
      .def("__repr__", [](const PyEnv& e) { return fmt::format("<dprl.Env {}>", e.spec().id); });

  py::class_<PyVecEnv>(m, "VecEnv", "num_envs environments stepped in C++ (dprl.make_vec)")
      .def("reset", &PyVecEnv::reset, py::kw_only(), py::arg("seed") = py::none(),
           py::arg("options") = py::none())
      .def("step", &PyVecEnv::step, py::arg("actions"))
      .def_property_readonly("num_envs", &PyVecEnv::num_envs)
      .def_readonly("observation_space", &PyVecEnv::obs_space_)
      .def_readonly("action_space", &PyVecEnv::act_space_)
      .def_readonly("single_observation_space", &PyVecEnv::single_obs_space_)
      .def_readonly("single_action_space", &PyVecEnv::single_act_space_)
      .def_property_readonly("metadata",
                             [](const PyVecEnv&) {
                               py::dict d;
                               d["autoreset_mode"] = "NextStep";
                               return d;
                             })
      .def("state", &PyVecEnv::state, py::arg("index"))
      .def("close", [](PyVecEnv&) {})
      .def("__repr__", [](const PyVecEnv& e) {
        return fmt::format("<dprl.VecEnv {} x {}>", e.num_envs(), e.spec().id);
      });

  m.def(
      "make",
      [](const std::string& id, const py::kwargs& params) {
        return std::make_unique<PyEnv>(id, params);
      },
      py::arg("env_id"), "An env by id or Gymnasium alias, parameters as keywords");
  m.def(
      "make_vec",
      [](const std::string& id, std::int64_t num_envs, bool copy, const py::kwargs& params) {
        return std::make_unique<PyVecEnv>(id, num_envs, copy, params);
      },
      py::arg("env_id"), py::arg("num_envs") = 1, py::kw_only(), py::arg("copy") = true,
      "num_envs envs of one id stepped in C++ with next-step auto-reset");
  m.def(
      "env_ids", [] { return envs::env_registry().all_names(); },
      "Every registered env id and alias");
}

}  // namespace dprl::python
