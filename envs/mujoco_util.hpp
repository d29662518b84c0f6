// Shared plumbing of the MuJoCo envs (half_cheetah, dmc_cartpole): owned model and data, model
// loading with readable errors, MuJoCo's global error and warning hooks, and the exact state.
//
// Platform: MuJoCo 2.2.2 (Debian libmujoco-dev). Only the MuJoCo env sources include MuJoCo's
// headers; this header names MuJoCo's structs by their opaque tags (mjModel_, mjData_) only.
//
// Errors. MuJoCo reports problems three ways, handled as follows:
// - mj_loadXML fills an error buffer (its compiler catches its own errors on its thread-local
//   handler): load_model_* turns that into ModelLoadError naming the file (or the built-in model).
// - mj_warning (unstable simulation: NaN or |x| > 1e10 in qpos, qvel, qacc or ctrl; full contact or
//   constraint buffers; singular inertia) counts in mjData::warning, resets the data and prints
//   through mju_user_warning. install_hooks() routes that print to a silent per-thread buffer, and
//   check_warnings() (called after each env step, outside MuJoCo's frames) throws DataError with
//   MuJoCo's text. The env must then be reset (reset clears the counters).
// - mju_error (MuJoCo's fatal errors: out of memory, stack overflow, invalid enums) calls the
//   global mju_user_error hook, after which MuJoCo would carry on with corrupt data, so the hook
//   must not return. Throwing or longjmp through MuJoCo's C frames is not allowed, so instead the
//   preconditions are checked up front (model shape checked at load, stack sized by the model,
//   actions and states checked before they reach MuJoCo) and the hook that install_hooks() sets
//   prints "dprl: fatal MuJoCo error: <text>" to stderr and aborts: reaching it is a bug. The
//   default hook would print to stdout and wait for Enter. Hooks already set by the host program
//   are left alone.
//
// Exact state (MuJoCo 2.2 has no mj_getState): qpos, qvel, act, ctrl, time and qacc_warmstart
// (the Newton solver's warm start; the next step depends on it in the last bits). Restoring these
// and stepping reproduces a trajectory bit for bit. Layout of the flat vector:
// [qpos (nq), qvel (nv), act (na), ctrl (nu), time, qacc_warmstart (nv)].
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/space.hpp"

namespace dprl {
class StateIo;
}

struct mjModel_;
struct mjData_;

namespace dprl::envs::mj {

struct ModelDeleter {
  void operator()(mjModel_* m) const noexcept;
};
struct DataDeleter {
  void operator()(mjData_* d) const noexcept;
};
using ModelPtr = std::unique_ptr<mjModel_, ModelDeleter>;
using DataPtr = std::unique_ptr<mjData_, DataDeleter>;

// Sets MuJoCo's global error and warning hooks (once per process; see above).
void install_hooks();

// The model in the MJCF text xml; name ("built-in half_cheetah.xml") labels errors. Throws
// ModelLoadError with MuJoCo's message.
ModelPtr load_model_from_text(std::string_view name, std::string_view xml);
// The model in the MJCF file at path. Throws ModelLoadError naming the path when the file is
// missing, unreadable or not a valid model.
ModelPtr load_model_from_file(const std::string& path);
// path empty: the built-in text; otherwise the file.
ModelPtr load_model(const std::string& path, std::string_view builtin_name,
                    std::string_view builtin_xml);

// Throws ModelLoadError unless the model has exactly these sizes and every actuator a control
// range (a custom xml_file must keep the env's joints and actuators).
void check_model_shape(const mjModel_* m, std::string_view env_id, const std::string& source,
                       int nq, int nv, int nu, int na);

// mj_makeData; mj_resetData'ed.
DataPtr make_data(const mjModel_* m);

// Throws DataError "<env_id>: MuJoCo: <warning text>" if any warning was raised since the last
// reset (all kinds except the renderer's full visual-geom buffer).
void check_warnings(const mjData_* d, std::string_view env_id);

// Exact state: size, save into out (exact_state_size values), restore (values already checked
// finite by the caller). restore does not call mj_forward, which would overwrite qacc_warmstart.
std::size_t exact_state_size(const mjModel_* m);
void save_exact_state(const mjModel_* m, const mjData_* d, std::span<double> out);
void restore_exact_state(const mjModel_* m, mjData_* d, std::span<const double> in);

// Gymnasium's MujocoEnv.set_state, made a function of its arguments: mj_resetData (time, ctrl, act
// and the warm start to zero), then qpos and qvel, then mj_forward.
void set_qpos_qvel(const mjModel_* m, mjData_* d, std::span<const double> qpos,
                   std::span<const double> qvel);

// Env::state() of a MuJoCo env: the exact state.
std::vector<double> exact_state(const mjModel_* m, const mjData_* d);
// Env::set_state() of a MuJoCo env: Gymnasium's [qpos, qvel] form (nq + nv values, through
// set_qpos_qvel) or the exact state (exact_state_size values); anything else, or a non-finite
// value, throws ParamError naming spec.id. Returns true when the exact state was restored (the
// caller may then need derived quantities such as mj_kinematics).
bool set_env_state(const mjModel_* m, mjData_* d, const EnvSpec& spec, std::span<const double> s,
                   int nq, int nv);

// MuJoCo flags controls with |u| > 1e10 (mjMAXVAL) as bad and zeroes them: callers reject them.
inline constexpr double kMaxValue = 1e10;

// What an env's do_sync_state lists to continue exactly: the physics (exact state above) and the
// env's RNG words (Env::sync_state adds the step counter).
struct Snapshot {
  std::vector<double> physics;
  std::uint64_t rng[4] = {0, 0, 0, 0};
};

// Saves s, or loads it, under the checkpoint section `section`. A load refuses an all-zero RNG
// state (DataError). Returns io.loading(): the caller then restores s.
bool sync_snapshot(StateIo& io, std::string_view section, Snapshot& s);

}  // namespace dprl::envs::mj
