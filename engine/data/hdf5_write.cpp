// Writing through the HDF5 facade (engine/data/hdf5_file.hpp).
#include <fmt/format.h>

#include <vector>

#include "engine/data/hdf5_detail.hpp"
#include "engine/data/hdf5_file.hpp"
#include "engine/error.hpp"

namespace dprl::h5 {

using detail::fail;
using detail::Handle;
using detail::silence_hdf5;

File File::create(const std::filesystem::path& path) {
  std::unique_lock lock(library_mutex());
  silence_hdf5();
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  Handle fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
  H5Pset_obj_track_times(fcpl.get(), false);  // the root group carries no timestamps either
  const hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get());
  if (id < 0) fail(path.string(), "/", "cannot create");
  return File(std::move(lock), id, path.string());
}

void File::create_group(const std::string& path) {
  close_current_group();
  // no timestamps: the same data gives the same bytes
  Handle gcpl(H5Pcreate(H5P_GROUP_CREATE), H5Pclose);
  H5Pset_obj_track_times(gcpl.get(), false);
  const hid_t g = H5Gcreate2(id_, path.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT);
  if (g < 0) fail(name_, path, "cannot create group");
  // kept open: members written next are created relative to it, not looked up from the root
  group_id_ = g;
  group_path_ = path;
}

void File::close_current_group() {
  if (group_id_ >= 0) H5Gclose(group_id_);
  group_id_ = -1;
  group_path_.clear();
}

std::pair<std::int64_t, std::string> File::locate(const std::string& key) const {
  if (group_id_ >= 0 && key.size() > group_path_.size() + 1 &&
      key.compare(0, group_path_.size(), group_path_) == 0 && key[group_path_.size()] == '/')
    return {group_id_, key.substr(group_path_.size() + 1)};
  return {id_, key};
}

namespace {

// Creates loc/name (key names it in messages) and writes data; returns its file offset.
std::uint64_t write_array(const std::string& file, hid_t loc, const std::string& name,
                          const std::string& key, const void* data,
                          std::span<const std::uint64_t> shape, hid_t file_type, hid_t mem_type) {
  const std::vector<hsize_t> dims(shape.begin(), shape.end());
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_obj_track_times(dcpl.get(), false);  // the same data gives the same bytes
  Handle d(space.ok() ? H5Dcreate2(loc, name.c_str(), file_type, space.get(), H5P_DEFAULT,
                                   dcpl.get(), H5P_DEFAULT)
                      : -1,
           H5Dclose);
  if (!d.ok()) fail(file, key, "cannot create dataset");
  if (H5Dwrite(d.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    fail(file, key, "cannot write");
  const haddr_t at = H5Dget_offset(d.get());
  H5Eclear2(H5E_DEFAULT);
  return at == HADDR_UNDEF ? kNoOffset : static_cast<std::uint64_t>(at);
}

std::uint64_t product(std::span<const std::uint64_t> shape) {
  std::uint64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

}  // namespace

std::uint64_t File::write(const std::string& key, std::span<const float> data,
                          std::span<const std::uint64_t> shape) {
  DPRL_CHECK(product(shape) == data.size());
  const auto [loc, name] = locate(key);
  return write_array(name_, loc, name, key, data.data(), shape, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT);
}

std::uint64_t File::write(const std::string& key, std::span<const std::int64_t> data,
                          std::span<const std::uint64_t> shape) {
  DPRL_CHECK(product(shape) == data.size());
  const auto [loc, name] = locate(key);
  return write_array(name_, loc, name, key, data.data(), shape, H5T_STD_I64LE, H5T_NATIVE_INT64);
}

std::uint64_t File::write_flags(const std::string& key, std::span<const std::uint8_t> data) {
  Handle ft(H5Tenum_create(H5T_STD_I8LE), H5Tclose);
  Handle mt(H5Tenum_create(H5T_NATIVE_SCHAR), H5Tclose);
  const signed char f = 0, t = 1;
  for (hid_t type : {ft.get(), mt.get()}) {
    if (H5Tenum_insert(type, "FALSE", &f) < 0 || H5Tenum_insert(type, "TRUE", &t) < 0)
      fail(name_, key, "cannot build the bool enum");
  }
  const std::uint64_t shape[1] = {data.size()};
  const auto [loc, name] = locate(key);
  return write_array(name_, loc, name, key, data.data(), shape, ft.get(), mt.get());
}

void File::set_attr(const std::string& path, const std::string& name, std::int64_t value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  const hid_t loc = group_id_ >= 0 && path == group_path_ ? group_id_ : id_;
  Handle a(H5Acreate_by_name(loc, loc == id_ ? path.c_str() : ".", name.c_str(), H5T_STD_I64LE,
                             space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
  if (!a.ok() || H5Awrite(a.get(), H5T_NATIVE_INT64, &value) < 0)
    fail(name_, path + "@" + name, "cannot write attribute");
}

void File::set_attr_double(const std::string& path, const std::string& name, double value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  const hid_t loc = group_id_ >= 0 && path == group_path_ ? group_id_ : id_;
  Handle a(H5Acreate_by_name(loc, loc == id_ ? path.c_str() : ".", name.c_str(), H5T_IEEE_F64LE,
                             space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
  if (!a.ok() || H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &value) < 0)
    fail(name_, path + "@" + name, "cannot write attribute");
}

void File::set_attr_string(const std::string& path, const std::string& name,
                           const std::string& value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  const hid_t loc = group_id_ >= 0 && path == group_path_ ? group_id_ : id_;
  Handle a(H5Acreate_by_name(loc, loc == id_ ? path.c_str() : ".", name.c_str(), type.get(),
                             space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
           H5Aclose);
  const char* p = value.c_str();
  if (!a.ok() || H5Awrite(a.get(), type.get(), &p) < 0)
    fail(name_, path + "@" + name, "cannot write attribute");
}

}  // namespace dprl::h5
