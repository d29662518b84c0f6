// Internal to engine/data/hdf5_file.cpp and engine/data/hdf5_write.cpp (the only files that include
// hdf5.h): handles closed on scope exit and errors turned into DataError.
#pragma once

#include <fmt/format.h>
#include <hdf5.h>

#include <mutex>
#include <string>

#include "engine/data/hdf5_file.hpp"
#include "engine/error.hpp"

namespace dprl::h5::detail {

static_assert(sizeof(hid_t) == sizeof(std::int64_t), "HDF5 >= 1.10 has 64-bit handles");

// HDF5 prints its error stack to stderr by default; errors become DataError instead.
inline void silence_hdf5() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

// The innermost message of HDF5's error stack ("" when empty), then clears the stack.
inline std::string hdf5_message() {
  std::string msg;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* e, void* data) -> herr_t {
        if (n == 0 && e->desc != nullptr) *static_cast<std::string*>(data) = e->desc;
        return 0;
      },
      &msg);
  H5Eclear2(H5E_DEFAULT);
  for (char& c : msg)
    if (c == '\n' || c == '\r') c = ' ';
  return msg;
}

// An HDF5 handle closed on scope exit.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  Closer close_;
};

[[noreturn]] inline void fail(const std::string& file, const std::string& key,
                              const std::string& what) {
  const std::string h5 = hdf5_message();
  throw DataError(h5.empty() ? fmt::format("{}: {}: {}", file, key, what)
                             : fmt::format("{}: {}: {} ({})", file, key, what, h5));
}

inline TypeClass classify(hid_t type) {
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      return TypeClass::kInteger;
    case H5T_FLOAT:
      return TypeClass::kFloat;
    case H5T_ENUM:
      return TypeClass::kEnum;
    case H5T_STRING:
      return TypeClass::kString;
    default:
      return TypeClass::kOther;
  }
}

inline const char* describe(TypeClass c) {
  switch (c) {
    case TypeClass::kInteger:
      return "integers";
    case TypeClass::kFloat:
      return "floats";
    case TypeClass::kEnum:
      return "an enum";
    case TypeClass::kString:
      return "strings";
    default:
      return "an unsupported type";
  }
}

inline bool is_number(TypeClass c) { return c == TypeClass::kInteger || c == TypeClass::kFloat; }

}  // namespace dprl::h5::detail
