// A small facade over HDF5's C API (Debian's libhdf5 1.10, serial) for the dataset readers and
// writers. It exposes no HDF5 types: handles are kept as integers inside the class, and hdf5.h is
// included by hdf5_file.cpp and hdf5_write.cpp only (through hdf5_detail.hpp).
//
// Every failure throws DataError "<file>: <key>: <what>" (HDF5's own error stack is silenced and
// its innermost message appended). Whole datasets are read in one H5Dread with HDF5 converting
// the file type to the memory type (float32, float64 or int64). Flags are read from an HDF5 enum
// over a 1-byte integer (how h5py stores numpy bool), or from any integer or float type holding
// only 0 and 1.
//
// Before anything is allocated for a dataset, info() reports its extent and the bytes it occupies
// in the file; check_plausible() refuses an extent the file cannot hold (uncompressed: storage
// smaller than the extent; filtered: more than 1100x the stored bytes, beyond gzip's 1032:1).
//
// Files written carry no timestamps (the same data gives the same bytes).
//
// The serial HDF5 library is not thread-safe: every File holds File::library_mutex() from open to
// close, so datasets loaded from several threads (a sweep's runs) are read one after another.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace dprl::h5 {

inline constexpr std::uint64_t kNoOffset = ~std::uint64_t{0};

enum class TypeClass { kInteger, kFloat, kEnum, kString, kOther };

struct ArrayInfo {
  std::vector<std::uint64_t> shape;  // empty for a scalar
  TypeClass type = TypeClass::kOther;
  std::size_t elem_size = 0;        // bytes per element in the file
  std::uint64_t storage_bytes = 0;  // bytes allocated in the file
  bool filtered = false;            // compressed (any filter in the pipeline)
  std::uint64_t elements() const;
  std::uint64_t rows() const { return shape.empty() ? 1 : shape[0]; }
  // Elements per row (product of the trailing dimensions).
  std::uint64_t row_elements() const;
};

// One attribute of a group, read without coercion.
struct Attribute {
  std::string name;
  TypeClass type = TypeClass::kOther;
  bool scalar = false;  // one element
  // the value when it is a scalar exact integer: an integer type within int64, or a float
  // holding an integer of magnitude at most 2^53 (nothing else is taken as an identifier)
  std::optional<std::int64_t> integer;
  // for messages: the value as text (a number, or a string's text quoted and escaped), or its
  // type ("an array of 3 values")
  std::string shown;
};

// The exact integer a double holds: finite, without fraction, |v| <= 2^53 (beyond that a float
// cannot tell neighbouring integers apart); nullopt otherwise.
std::optional<std::int64_t> exact_integer(double v);

class File;

// One open dataset: its header read once, then one whole read.
class Array {
 public:
  Array(Array&& other) noexcept;
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  Array& operator=(Array&&) = delete;
  ~Array();

  const ArrayInfo& info() const { return info_; }
  const std::string& key() const { return key_; }
  // Throws DataError unless the file can hold the extent (see above).
  void check_plausible() const;
  // Whole dataset into out (out.size() must equal its element count; numbers only).
  void read(std::span<float> out) const;
  void read(std::span<double> out) const;
  void read(std::span<std::int64_t> out) const;
  // Whole dataset of 0/1 flags (enum, bool or numbers); any other value throws naming the row.
  void read_flags(std::span<std::uint8_t> out) const;
  // Whole dataset of exact integers (identifiers such as user ids): integer types whose values
  // fit int64, or floats holding integers of magnitude at most 2^53; anything else (a fraction,
  // an out-of-range value, NaN, strings) throws DataError naming the row and the value. Never
  // rounds, truncates or saturates.
  void read_exact_integers(std::span<std::int64_t> out) const;

 private:
  friend class File;
  friend class Group;
  Array(const File& file, std::int64_t id, std::string key);
  template <class T>
  void read_numbers(std::span<T> out, std::int64_t mem_type) const;
  const File* file_;
  std::int64_t id_;
  std::string key_;
  ArrayInfo info_;
};

// One open group: members and attributes looked up relative to it (cheaper than paths from the
// root when a file holds many groups).
class Group {
 public:
  Group(Group&& other) noexcept;
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  Group& operator=(Group&&) = delete;
  ~Group();

  const std::string& path() const { return path_; }
  // A member dataset; DataError "<path>/<name>: missing" when absent.
  Array array(const std::string& name) const;
  // Every attribute, in name order: its type and, for a scalar holding an exact integer, the
  // value (see Attribute).
  std::vector<Attribute> attrs() const;

 private:
  friend class File;
  Group(const File& file, std::int64_t id, std::string path);
  const File* file_;
  std::int64_t id_;
  std::string path_;
};

class File {
 public:
  // Opens read-only; DataError when missing, not HDF5 or corrupt.
  static File open(const std::filesystem::path& path);
  // Creates (truncating) for writing, file format of HDF5 1.8 or later.
  static File create(const std::filesystem::path& path);
  File(File&& other) noexcept;
  File& operator=(File&& other) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File();

  const std::string& name() const { return name_; }
  static std::recursive_mutex& library_mutex();
  // Flushes and closes; throws DataError when the data cannot be written.
  void close();

  // Whether an object exists at a '/'-separated path (every level checked).
  bool exists(const std::string& path) const;
  bool is_group(const std::string& path) const;
  // Names of a group's direct members, in name order.
  std::vector<std::string> children(const std::string& group) const;

  // Opens a dataset; DataError "missing" or "not a readable dataset".
  Array array(const std::string& key) const;
  // Opens a group; DataError "missing" or "not a group".
  Group group(const std::string& path) const;
  ArrayInfo info(const std::string& key) const { return array(key).info(); }
  std::uint64_t file_size() const;
  // Scalar or one-element dataset: a number, or a string (fixed or variable length).
  std::optional<double> read_scalar(const std::string& key) const;
  std::optional<std::string> read_string(const std::string& key) const;

  void create_group(const std::string& path);
  // Contiguous datasets of the given shape (product = data.size()), little-endian float32 or
  // int64. Each returns the byte offset of the data in the file (kNoOffset if HDF5 has none).
  std::uint64_t write(const std::string& key, std::span<const float> data,
                      std::span<const std::uint64_t> shape);
  std::uint64_t write(const std::string& key, std::span<const std::int64_t> data,
                      std::span<const std::uint64_t> shape);
  // 1-D flags as h5py writes numpy bool: an enum over int8 with FALSE = 0, TRUE = 1.
  std::uint64_t write_flags(const std::string& key, std::span<const std::uint8_t> data);
  void set_attr(const std::string& path, const std::string& name, std::int64_t value);
  // Attributes of other types (a float64 scalar, a variable-length UTF-8 string), as other
  // writers (h5py) store them; the readers must refuse them where an integer is required.
  void set_attr_double(const std::string& path, const std::string& name, double value);
  void set_attr_string(const std::string& path, const std::string& name, const std::string& value);

 private:
  friend class Array;
  friend class Group;
  File(std::unique_lock<std::recursive_mutex> lock, std::int64_t id, std::string name);
  std::unique_lock<std::recursive_mutex> lock_;  // first: released after the file is closed
  std::int64_t id_ = -1;
  std::string name_;
  std::uint64_t size_ = 0;  // bytes, at open
  // writing: the group created last, kept open (its members are created relative to it)
  std::int64_t group_id_ = -1;
  std::string group_path_;
  void close_current_group();
  std::pair<std::int64_t, std::string> locate(const std::string& key) const;
};

}  // namespace dprl::h5
