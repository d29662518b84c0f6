#include "engine/data/hdf5_file.hpp"

#include <fmt/format.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "engine/data/hdf5_detail.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"

namespace dprl::h5 {
using detail::classify;
using detail::describe;
using detail::fail;
using detail::Handle;
using detail::is_number;
using detail::silence_hdf5;

std::uint64_t ArrayInfo::elements() const {
  std::uint64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::uint64_t ArrayInfo::row_elements() const {
  std::uint64_t n = 1;
  for (std::size_t i = 1; i < shape.size(); ++i) n *= shape[i];
  return n;
}

std::recursive_mutex& File::library_mutex() {
  static std::recursive_mutex m;
  return m;
}

namespace {

// The probe's limits: memory beyond what the process already maps, and time.
constexpr std::uint64_t kProbeBytes = std::uint64_t{1} << 30;
constexpr unsigned kProbeSeconds = 60;

// In the probe: a lookup by name in every group (what loads a group's local heap, where the loop
// was: iterating over a group need not load it) and every dataset opened (object header,
// dataspace, type): the metadata the readers touch before they allocate anything.
herr_t probe_object(hid_t obj, const char* name, const H5O_info_t* info, void*) {
  if (info->type == H5O_TYPE_GROUP) {
    H5Lexists(obj, (std::string(name) + "/dprl_probe").c_str(), H5P_DEFAULT);
    return 0;
  }
  if (info->type != H5O_TYPE_DATASET) return 0;
  const hid_t d = H5Dopen2(obj, name, H5P_DEFAULT);
  if (d < 0) return 0;
  const hid_t space = H5Dget_space(d), type = H5Dget_type(d);
  if (space >= 0) {
    H5Sget_simple_extent_ndims(space);
    H5Sclose(space);
  }
  if (type >= 0) H5Tclose(type);
  H5Dclose(d);
  return 0;
}

// The bytes a process maps now, or the most it has mapped, or holds resident (VmSize, VmPeak,
// VmRSS of /proc/PID/status; this process when pid is 0; 0 when unknown).
std::uint64_t mapped_bytes(const char* field = "VmSize:", pid_t pid = 0) {
  const std::string status =
      pid == 0 ? std::string("/proc/self/status") : fmt::format("/proc/{}/status", pid);
  std::FILE* f = std::fopen(status.c_str(), "r");
  if (!f) return 0;
  char line[256];
  unsigned long long kb = 0;
  const std::size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, field, n) == 0 && std::sscanf(line + n, "%llu", &kb) == 1) break;
  std::fclose(f);
  return static_cast<std::uint64_t>(kb) * 1024;
}

// HDF5 1.10.8 loops without end on some corrupt files, allocating until the machine runs out of
// memory (a damaged local heap free list behind a group lookup: found by libFuzzer, input
// tests/fuzz/corpus/dataset/hdf5_heap_loop). Such a file must be refused, not take the machine
// down, and HDF5 offers no limit of its own: a child process opens the file first and visits
// every object under a limit of kProbeBytes more address space, half of it more resident memory,
// and kProbeSeconds, and the file is opened here only when the child got through. The parent holds
// the library mutex while forking, so the child's copy of HDF5 is in a consistent state; the child
// starts no thread (a forked copy of a multi-threaded process may find a lock of the thread
// registry held by a thread that no longer exists in it) and ends with _exit (no atexit handlers,
// no flushing of the parent's buffers). The parent watches the child's resident memory.
void probe_in_child(const std::filesystem::path& path) {
  std::fflush(nullptr);
  // resident memory too: an allocator that reserved its address space up front (a sanitizer's)
  // is not held back by RLIMIT_AS; the child starts with about the parent's resident set
  const std::uint64_t rss = mapped_bytes("VmRSS:");
  const pid_t pid = ::fork();
  if (pid < 0) return;  // no process to spare: open directly
  if (pid == 0) {
    const std::uint64_t start = mapped_bytes();
    const std::uint64_t limit = start + kProbeBytes;
    const rlimit as{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
    ::setrlimit(RLIMIT_AS, &as);
    ::alarm(kProbeSeconds);
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f >= 0) {
      H5Lexists(f, "dprl_probe", H5P_DEFAULT);  // the root group's heap
      H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_NATIVE, probe_object, nullptr, H5O_INFO_BASIC);
      H5Fclose(f);
    }
    // at the limit HDF5's allocations fail and it may return an error like any other: what
    // tells the loop is the memory it took (reading metadata never maps half a GiB)
    ::_exit(mapped_bytes("VmPeak:") - start > kProbeBytes / 2 ? 1 : 0);
  }
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) break;
    if (r == 0 && mapped_bytes("VmRSS:", pid) > rss + kProbeBytes / 2) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw DataError(fmt::format(
        "{}: HDF5 could not read the file's structure within {} MiB and {} s (a corrupt file; "
        "HDF5 1.10 can loop on some)",
        path.string(), kProbeBytes >> 21, kProbeSeconds));
}

}  // namespace

File File::open(const std::filesystem::path& path) {
  std::unique_lock lock(library_mutex());
  silence_hdf5();
  std::error_code ec;
  // a FIFO or a folder is named as such (HDF5 would block on a FIFO, or say "no such file")
  if (const std::string problem = file_problem(path); !problem.empty())
    throw DataError(fmt::format("{}: {}", path.string(), problem == "missing" ? "no such file"
                                                                               : problem));
  probe_in_child(path);
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) fail(path.string(), "/", "not a readable HDF5 file (corrupt or truncated?)");
  return File(std::move(lock), id, path.string());
}

File::File(std::unique_lock<std::recursive_mutex> lock, std::int64_t id, std::string name)
    : lock_(std::move(lock)), id_(id), name_(std::move(name)) {
  hsize_t n = 0;
  if (H5Fget_filesize(id_, &n) >= 0) size_ = n;
}

File::File(File&& other) noexcept
    : lock_(std::move(other.lock_)),
      id_(other.id_),
      name_(std::move(other.name_)),
      size_(other.size_) {
  other.id_ = -1;
}

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    close_current_group();
    if (id_ >= 0) H5Fclose(id_);
    lock_ = std::move(other.lock_);
    id_ = other.id_;
    name_ = std::move(other.name_);
    size_ = other.size_;
    group_id_ = other.group_id_;
    group_path_ = std::move(other.group_path_);
    other.id_ = -1;
    other.group_id_ = -1;
  }
  return *this;
}

File::~File() {
  close_current_group();
  if (id_ >= 0) H5Fclose(id_);
}

void File::close() {
  if (id_ < 0) return;
  close_current_group();
  const herr_t f = H5Fflush(id_, H5F_SCOPE_LOCAL);
  const herr_t c = H5Fclose(id_);
  id_ = -1;
  const std::string h5 = f < 0 || c < 0 ? detail::hdf5_message() : "";
  if (lock_.owns_lock()) lock_.unlock();
  if (f < 0 || c < 0)
    throw DataError(h5.empty() ? fmt::format("{}: /: cannot write", name_)
                               : fmt::format("{}: /: cannot write ({})", name_, h5));
}

bool File::exists(const std::string& path) const {
  std::size_t pos = 0;
  for (;;) {
    const std::size_t slash = path.find('/', pos);
    const std::string part = path.substr(0, slash);
    if (!part.empty() && H5Lexists(id_, part.c_str(), H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return false;
    }
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  const htri_t ok = H5Oexists_by_name(id_, path.c_str(), H5P_DEFAULT);
  H5Eclear2(H5E_DEFAULT);
  return ok > 0;
}

bool File::is_group(const std::string& path) const {
  if (!exists(path)) return false;
  H5O_info_t oi;
  if (H5Oget_info_by_name2(id_, path.c_str(), &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  return oi.type == H5O_TYPE_GROUP;
}

std::vector<std::string> File::children(const std::string& group) const {
  std::vector<std::string> names;
  if (!is_group(group)) return names;
  Handle g(H5Gopen2(id_, group.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.ok()) fail(name_, group, "cannot open group");
  hsize_t idx = 0;
  const herr_t r = H5Literate(
      g.get(), H5_INDEX_NAME, H5_ITER_INC, &idx,
      [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->emplace_back(name);
        return 0;
      },
      &names);
  if (r < 0) fail(name_, group, "cannot list members");
  return names;
}

Array File::array(const std::string& key) const {
  const hid_t d = H5Dopen2(id_, key.c_str(), H5P_DEFAULT);
  if (d < 0) {
    H5Eclear2(H5E_DEFAULT);
    if (!exists(key)) fail(name_, key, "missing");
    fail(name_, key, "not a readable dataset");
  }
  return Array(*this, d, key);
}

std::uint64_t File::file_size() const { return size_; }

Group File::group(const std::string& path) const {
  const hid_t g = H5Gopen2(id_, path.c_str(), H5P_DEFAULT);
  if (g < 0) {
    H5Eclear2(H5E_DEFAULT);
    if (!exists(path)) fail(name_, path, "missing");
    fail(name_, path, "not a readable group");
  }
  return Group(*this, g, path);
}

Group::Group(const File& file, std::int64_t id, std::string path)
    : file_(&file), id_(id), path_(std::move(path)) {}

Group::Group(Group&& other) noexcept
    : file_(other.file_), id_(other.id_), path_(std::move(other.path_)) {
  other.id_ = -1;
}

Group::~Group() {
  if (id_ >= 0) H5Gclose(id_);
}

Array Group::array(const std::string& name) const {
  const std::string key = path_ + "/" + name;
  const hid_t d = H5Dopen2(id_, name.c_str(), H5P_DEFAULT);
  if (d < 0) {
    H5Eclear2(H5E_DEFAULT);
    if (H5Lexists(id_, name.c_str(), H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      fail(file_->name(), key, "missing");
    }
    fail(file_->name(), key, "not a readable dataset");
  }
  return Array(*file_, d, key);
}

std::optional<std::int64_t> exact_integer(double v) {
  constexpr double kMax = 9007199254740992.0;  // 2^53
  if (!std::isfinite(v) || v != std::trunc(v) || std::fabs(v) > kMax) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

namespace {

// Reads n elements of an attribute or dataset of integer type t as exact int64: unsigned 64-bit
// values above 2^63 - 1 and integers wider than 8 bytes are reported (ok = false), never
// saturated. read(mem_type, buffer) does the H5Aread or H5Dread; false when it failed.
template <class Read>
bool read_exact_int64(hid_t t, std::span<std::int64_t> out, std::vector<bool>& ok, Read read) {
  ok.assign(out.size(), true);
  if (H5Tget_size(t) > 8) {
    ok.assign(out.size(), false);
    return true;
  }
  if (H5Tget_sign(t) == H5T_SGN_NONE && H5Tget_size(t) == 8) {
    std::vector<std::uint64_t> u(out.size());
    if (!read(H5T_NATIVE_UINT64, u.data())) return false;
    for (std::size_t i = 0; i < u.size(); ++i) {
      ok[i] = u[i] <= static_cast<std::uint64_t>(INT64_MAX);
      out[i] = ok[i] ? static_cast<std::int64_t>(u[i]) : 0;
    }
    return true;
  }
  return read(H5T_NATIVE_INT64, out.data());
}

}  // namespace

std::vector<Attribute> Group::attrs() const {
  struct Ctx {
    std::vector<Attribute> out;
    bool failed = false;
  } ctx;
  hsize_t idx = 0;
  const herr_t r = H5Aiterate2(
      id_, H5_INDEX_NAME, H5_ITER_INC, &idx,
      [](hid_t loc, const char* name, const H5A_info_t*, void* data) -> herr_t {
        auto* c = static_cast<Ctx*>(data);
        Handle a(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
        Handle t(a.ok() ? H5Aget_type(a.get()) : -1, H5Tclose);
        Handle s(a.ok() ? H5Aget_space(a.get()) : -1, H5Sclose);
        if (!t.ok() || !s.ok()) return (c->failed = true), -1;
        Attribute at;
        at.name = name;
        at.type = classify(t.get());
        const hssize_t points = H5Sget_simple_extent_npoints(s.get());
        at.scalar = points == 1;
        const auto read = [&](hid_t mem, void* buf) { return H5Aread(a.get(), mem, buf) >= 0; };
        if (!at.scalar) {
          at.shown = fmt::format("an array of {} values", points);
        } else if (at.type == TypeClass::kInteger) {
          std::int64_t v = 0;
          std::vector<bool> ok;
          if (!read_exact_int64(t.get(), std::span(&v, 1), ok, read))
            return (c->failed = true), -1;
          if (ok[0]) at.integer = v;
          at.shown = ok[0] ? std::to_string(v) : "an integer beyond int64";
        } else if (at.type == TypeClass::kFloat) {
          double v = 0;
          if (!read(H5T_NATIVE_DOUBLE, &v)) return (c->failed = true), -1;
          at.integer = exact_integer(v);
          at.shown = fmt::format("{}", v);
        } else if (at.type == TypeClass::kString) {
          // the text, bounded, for the message
          std::string text;
          if (H5Tis_variable_str(t.get()) > 0) {
            Handle mt(H5Tcopy(H5T_C_S1), H5Tclose);
            H5Tset_size(mt.get(), H5T_VARIABLE);
            H5Tset_cset(mt.get(), H5Tget_cset(t.get()));
            char* p = nullptr;
            if (H5Aread(a.get(), mt.get(), &p) >= 0 && p != nullptr) {
              text = p;
              H5Dvlen_reclaim(mt.get(), s.get(), H5P_DEFAULT, &p);
            }
          } else if (H5Tget_size(t.get()) <= (1u << 16)) {
            std::string buf(H5Tget_size(t.get()), '\0');
            Handle mt(H5Tcopy(t.get()), H5Tclose);
            if (H5Aread(a.get(), mt.get(), buf.data()) >= 0) text = buf.c_str();
          }
          if (text.size() > 64) text = text.substr(0, 64) + "...";
          at.shown = fmt::format("'{}' (a string)", text);
        } else {
          at.shown = fmt::format("a value of type {}", describe(at.type));
        }
        H5Eclear2(H5E_DEFAULT);
        c->out.push_back(std::move(at));
        return 0;
      },
      &ctx);
  if (r < 0 || ctx.failed) fail(file_->name(), path_, "unreadable attributes");
  return ctx.out;
}

Array::Array(const File& file, std::int64_t id, std::string key)
    : file_(&file), id_(id), key_(std::move(key)) {
  const auto bad = [&](const char* what) {
    H5Dclose(id_);
    id_ = -1;
    fail(file_->name(), key_, what);
  };
  Handle space(H5Dget_space(id_), H5Sclose);
  Handle type(H5Dget_type(id_), H5Tclose);
  if (!space.ok() || !type.ok()) bad("unreadable header");
  const int nd = H5Sget_simple_extent_ndims(space.get());
  if (nd < 0 || nd > 32) bad("unreadable dataspace");
  std::vector<hsize_t> dims(static_cast<std::size_t>(nd));
  if (nd > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
    bad("unreadable dataspace");
  info_.shape.assign(dims.begin(), dims.end());
  info_.type = classify(type.get());
  info_.elem_size = H5Tget_size(type.get());
  info_.storage_bytes = H5Dget_storage_size(id_);
  // whether a filter (compression) is set: asked only when the stored bytes are fewer than the
  // extent, since the property list copy costs as much as the rest of the header
  if (info_.storage_bytes < info_.elements() * info_.elem_size) {
    Handle dcpl(H5Dget_create_plist(id_), H5Pclose);
    if (!dcpl.ok()) bad("unreadable header");
    info_.filtered = H5Pget_nfilters(dcpl.get()) > 0;
  }
  H5Eclear2(H5E_DEFAULT);
}

Array::Array(Array&& other) noexcept
    : file_(other.file_),
      id_(other.id_),
      key_(std::move(other.key_)),
      info_(std::move(other.info_)) {
  other.id_ = -1;
}

Array::~Array() {
  if (id_ >= 0) H5Dclose(id_);
}

void Array::check_plausible() const {
  const std::string& name = file_->name();
  const std::uint64_t n = info_.elements();
  if (info_.elem_size > 0 && n > ~std::uint64_t{0} / info_.elem_size)
    fail(name, key_, "absurd extent");
  const std::uint64_t logical = n * info_.elem_size;
  const std::uint64_t file_size = file_->file_size();
  if (info_.storage_bytes > file_size)
    fail(name, key_,
         fmt::format("claims {} stored bytes in a file of {} (corrupt)", info_.storage_bytes,
                     file_size));
  const bool ok = info_.filtered ? logical / 1100 <= info_.storage_bytes + 1024
                                 : logical <= info_.storage_bytes;
  if (!ok)
    fail(name, key_,
         fmt::format("shape claims {} bytes but the file stores {} (truncated or corrupt)", logical,
                     info_.storage_bytes));
}

template <class T>
void Array::read_numbers(std::span<T> out, std::int64_t mem_type) const {
  if (!is_number(info_.type))
    fail(file_->name(), key_, fmt::format("holds {}, expected numbers", describe(info_.type)));
  if (info_.elements() != out.size())
    fail(file_->name(), key_,
         fmt::format("holds {} values, expected {}", info_.elements(), out.size()));
  check_plausible();
  if (H5Dread(id_, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    fail(file_->name(), key_, "read failed");
}

void Array::read(std::span<float> out) const { read_numbers(out, H5T_NATIVE_FLOAT); }
void Array::read(std::span<double> out) const { read_numbers(out, H5T_NATIVE_DOUBLE); }
void Array::read(std::span<std::int64_t> out) const { read_numbers(out, H5T_NATIVE_INT64); }

void Array::read_exact_integers(std::span<std::int64_t> out) const {
  const std::string& name = file_->name();
  if (info_.elements() != out.size())
    fail(name, key_, fmt::format("holds {} values, expected {}", info_.elements(), out.size()));
  if (info_.type == TypeClass::kFloat) {
    std::vector<double> tmp(out.size());
    read(std::span<double>(tmp));
    for (std::size_t i = 0; i < tmp.size(); ++i) {
      const auto v = exact_integer(tmp[i]);
      if (!v)
        fail(name, key_,
             fmt::format("row {} holds {}, not an integer identifier (a float must hold an "
                         "integer of magnitude at most 2^53)",
                         i, tmp[i]));
      out[i] = *v;
    }
    return;
  }
  if (info_.type != TypeClass::kInteger)
    fail(name, key_, fmt::format("holds {}, expected integers", describe(info_.type)));
  check_plausible();
  Handle ft(H5Dget_type(id_), H5Tclose);
  if (!ft.ok()) fail(name, key_, "unreadable type");
  std::vector<bool> ok;
  const auto read = [&](hid_t mem, void* buf) {
    return H5Dread(id_, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0;
  };
  if (!read_exact_int64(ft.get(), out, ok, read)) fail(name, key_, "read failed");
  for (std::size_t i = 0; i < ok.size(); ++i)
    if (!ok[i]) fail(name, key_, fmt::format("row {} holds an integer beyond int64", i));
}

void Array::read_flags(std::span<std::uint8_t> out) const {
  const std::string& name = file_->name();
  if (info_.elements() != out.size())
    fail(name, key_, fmt::format("holds {} values, expected {}", info_.elements(), out.size()));
  if (info_.type == TypeClass::kEnum) {
    if (info_.elem_size != 1) fail(name, key_, "enum flags over integers wider than 1 byte");
    check_plausible();
    Handle ft(H5Dget_type(id_), H5Tclose);
    Handle mt(ft.ok() ? H5Tget_native_type(ft.get(), H5T_DIR_ASCEND) : -1, H5Tclose);
    if (!mt.ok() || H5Dread(id_, mt.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
      fail(name, key_, "read failed");
    for (std::size_t i = 0; i < out.size(); ++i)
      if (out[i] > 1)
        fail(name, key_, fmt::format("row {} holds {}, not 0/1", i, static_cast<int>(out[i])));
    return;
  }
  if (!is_number(info_.type))
    fail(name, key_, fmt::format("holds {}, expected 0/1 flags", describe(info_.type)));
  std::vector<double> tmp(out.size());
  read(std::span<double>(tmp));
  for (std::size_t i = 0; i < tmp.size(); ++i) {
    if (tmp[i] != 0.0 && tmp[i] != 1.0)
      fail(name, key_, fmt::format("row {} holds {}, not 0/1", i, tmp[i]));
    out[i] = tmp[i] != 0.0 ? 1 : 0;
  }
}

std::optional<double> File::read_scalar(const std::string& key) const {
  if (!exists(key)) return std::nullopt;
  const Array a = array(key);
  if (!is_number(a.info().type) || a.info().elements() != 1) return std::nullopt;
  double v = 0;
  a.read(std::span<double>(&v, 1));
  return v;
}

std::optional<std::string> File::read_string(const std::string& key) const {
  if (!exists(key)) return std::nullopt;
  const ArrayInfo info = this->info(key);
  if (info.type != TypeClass::kString || info.elements() != 1) return std::nullopt;
  Handle d(H5Dopen2(id_, key.c_str(), H5P_DEFAULT), H5Dclose);
  Handle ft(d.ok() ? H5Dget_type(d.get()) : -1, H5Tclose);
  Handle space(d.ok() ? H5Dget_space(d.get()) : -1, H5Sclose);
  if (!ft.ok() || !space.ok()) fail(name_, key, "unreadable string");
  if (H5Tis_variable_str(ft.get()) > 0) {
    Handle mt(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mt.get(), H5T_VARIABLE);
    H5Tset_cset(mt.get(), H5Tget_cset(ft.get()));
    char* s = nullptr;
    if (H5Dread(d.get(), mt.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &s) < 0)
      fail(name_, key, "read failed");
    std::string out = s != nullptr ? s : "";
    H5Dvlen_reclaim(mt.get(), space.get(), H5P_DEFAULT, &s);
    return out;
  }
  if (info.elem_size > (1u << 20)) fail(name_, key, "absurd string length");
  std::string buf(info.elem_size, '\0');
  Handle mt(H5Tcopy(ft.get()), H5Tclose);
  if (H5Dread(d.get(), mt.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0)
    fail(name_, key, "read failed");
  buf.resize(std::strlen(buf.c_str()));
  return buf;
}

}  // namespace dprl::h5
