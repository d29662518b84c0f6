#include "envs/mujoco_util.hpp"

#include <fmt/format.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

#include "engine/error.hpp"
#include "engine/state_io.hpp"
#include "envs/env_util.hpp"

namespace dprl::envs::mj {
namespace {

// mju_user_error: MuJoCo would continue after a returning hook, so report and stop
extern "C" void fatal_error_hook(const char* msg) {
  std::fprintf(stderr, "dprl: fatal MuJoCo error: %s\n", msg ? msg : "(no message)");
  std::fflush(stderr);
  std::abort();
}

// the last warning text of this thread; check_warnings() rebuilds its message from mjData instead,
// so this only keeps MuJoCo from printing to stdout (which would corrupt the CLI's JSON)
thread_local char g_last_warning[1000];

extern "C" void warning_hook(const char* msg) {
  std::snprintf(g_last_warning, sizeof g_last_warning, "%s", msg ? msg : "");
}

std::string trim_trailing(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

void check_version() {
  if (mj_version() != mjVERSION_HEADER)
    throw ModelLoadError(fmt::format("MuJoCo library version {} does not match its headers ({})",
                                     mj_version(), mjVERSION_HEADER));
}

}  // namespace

void ModelDeleter::operator()(mjModel_* m) const noexcept { mj_deleteModel(m); }
void DataDeleter::operator()(mjData_* d) const noexcept { mj_deleteData(d); }

void install_hooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!mju_user_error) mju_user_error = fatal_error_hook;
    if (!mju_user_warning) mju_user_warning = warning_hook;
  });
}

ModelPtr load_model_from_text(std::string_view name, std::string_view xml) {
  install_hooks();
  check_version();
  // a virtual file system holding the one file (mjVFS is about 2 MB: heap, not stack)
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
  constexpr const char* kFile = "dprl_model.xml";
  if (mj_makeEmptyFileVFS(vfs.get(), kFile, static_cast<int>(xml.size())) != 0)
    throw ModelLoadError(fmt::format("{}: cannot create MuJoCo's virtual file", name));
  const int id = mj_findFileVFS(vfs.get(), kFile);
  std::memcpy(vfs->filedata[id], xml.data(), xml.size());
  char err[1000] = "";
  mjModel* m = mj_loadXML(kFile, vfs.get(), err, sizeof err);
  mj_deleteVFS(vfs.get());
  if (!m)
    throw ModelLoadError(
        fmt::format("{}: MuJoCo cannot load the model: {}", name, trim_trailing(err)));
  return ModelPtr(m);
}

ModelPtr load_model_from_file(const std::string& path) {
  install_hooks();
  check_version();
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe)
      throw ModelLoadError(fmt::format("cannot open MuJoCo model '{}': {}", path,
                                       std::strerror(errno ? errno : ENOENT)));
  }
  char err[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, err, sizeof err);
  if (!m)
    throw ModelLoadError(
        fmt::format("MuJoCo cannot load the model '{}': {}", path, trim_trailing(err)));
  return ModelPtr(m);
}

ModelPtr load_model(const std::string& path, std::string_view builtin_name,
                    std::string_view builtin_xml) {
  if (path.empty()) return load_model_from_text(builtin_name, builtin_xml);
  return load_model_from_file(path);
}

void check_model_shape(const mjModel_* m, std::string_view env_id, const std::string& source,
                       int nq, int nv, int nu, int na) {
  if (m->nq != nq || m->nv != nv || m->nu != nu || m->na != na)
    throw ModelLoadError(fmt::format(
        "{}: model '{}' has nq={} nv={} nu={} na={}; the env needs nq={} nv={} nu={} na={}", env_id,
        source, m->nq, m->nv, m->nu, m->na, nq, nv, nu, na));
  // the action box comes from actuator_ctrlrange, as in Gymnasium and dm_control
  for (int i = 0; i < m->nu; ++i) {
    const double lo = m->actuator_ctrlrange[2 * i], hi = m->actuator_ctrlrange[2 * i + 1];
    if (!m->actuator_ctrllimited[i] || !(lo < hi))
      throw ModelLoadError(fmt::format(
          "{}: model '{}': actuator {} needs ctrllimited=\"true\" and a ctrlrange lo < hi", env_id,
          source, i));
  }
}

DataPtr make_data(const mjModel_* m) {
  mjData* d = mj_makeData(m);
  if (!d) throw ModelLoadError("MuJoCo could not allocate its data");
  mj_resetData(m, d);
  return DataPtr(d);
}

void check_warnings(const mjData_* d, std::string_view env_id) {
  for (int k = 0; k < mjNWARNING; ++k) {
    if (k == mjWARN_VGEOMFULL) continue;
    if (d->warning[k].number != 0) [[unlikely]]
      throw DataError(fmt::format("{}: MuJoCo: {} (reset the env)", env_id,
                                  mju_warningText(k, d->warning[k].lastinfo)));
  }
}

std::size_t exact_state_size(const mjModel_* m) {
  return static_cast<std::size_t>(m->nq + m->nv + m->na + m->nu + 1 + m->nv);
}

void save_exact_state(const mjModel_* m, const mjData_* d, std::span<double> out) {
  double* o = out.data();
  o = std::copy_n(d->qpos, m->nq, o);
  o = std::copy_n(d->qvel, m->nv, o);
  o = std::copy_n(d->act, m->na, o);
  o = std::copy_n(d->ctrl, m->nu, o);
  *o++ = d->time;
  std::copy_n(d->qacc_warmstart, m->nv, o);
}

void restore_exact_state(const mjModel_* m, mjData_* d, std::span<const double> in) {
  mj_resetData(m, d);  // clears warnings and every derived quantity
  const double* p = in.data();
  std::copy_n(p, m->nq, d->qpos);
  p += m->nq;
  std::copy_n(p, m->nv, d->qvel);
  p += m->nv;
  std::copy_n(p, m->na, d->act);
  p += m->na;
  std::copy_n(p, m->nu, d->ctrl);
  p += m->nu;
  d->time = *p++;
  std::copy_n(p, m->nv, d->qacc_warmstart);
}

void set_qpos_qvel(const mjModel_* m, mjData_* d, std::span<const double> qpos,
                   std::span<const double> qvel) {
  mj_resetData(m, d);
  std::copy_n(qpos.data(), m->nq, d->qpos);
  std::copy_n(qvel.data(), m->nv, d->qvel);
  mj_forward(m, d);
}

std::vector<double> exact_state(const mjModel_* m, const mjData_* d) {
  std::vector<double> s(exact_state_size(m));
  save_exact_state(m, d, s);
  return s;
}

bool set_env_state(const mjModel_* m, mjData_* d, const EnvSpec& spec, std::span<const double> s,
                   int nq, int nv) {
  const auto gym = static_cast<std::size_t>(nq + nv);
  if (s.size() == gym) {
    check_state(spec, s, gym);
    set_qpos_qvel(m, d, s.first(nq), s.subspan(nq, nv));
    return false;
  }
  const std::size_t full = exact_state_size(m);
  if (s.size() != full)
    throw ParamError(
        fmt::format("{}: state has {} values; expected {} ([qpos, qvel]) or {} (the exact state)",
                    spec.id, s.size(), gym, full));
  check_state(spec, s, full);
  restore_exact_state(m, d, s);
  return true;
}

bool sync_snapshot(StateIo& io, std::string_view section, Snapshot& s) {
  io.section(section);
  io(s.physics, true);
  io.raw(s.rng, sizeof s.rng);
  if (io.loading() && (s.rng[0] | s.rng[1] | s.rng[2] | s.rng[3]) == 0)
    throw DataError("checkpoint: an all-zero random generator state in the env snapshot");
  return io.loading();
}

}  // namespace dprl::envs::mj
