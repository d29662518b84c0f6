// Network checkpoint files: named MLPs and float arrays, a format version and a checksum.
//
// Layout (little-endian): "DPRLNN\0\0" | u32 version (1) | u64 payload bytes | payload |
// u64 FNV-1a 64 of the payload. Payload: string kind, string meta (free text, e.g. JSON),
// u32 net count, each {string name, u32 layers + 1, i32 sizes..., u8 hidden act, u8 output act,
// u64 floats, floats}, u32 array count, each {string name, u64 floats, floats}; strings are u32
// length + bytes. A wrong magic, version, length, checksum or a shape that does not match its
// float count is a DataError naming the file; files are written atomically.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "engine/nn/nn_mlp.hpp"

namespace dprl::nn {

struct SavedNet {
  std::string name;
  MlpShape shape;
  Buffer params;
};
struct SavedArray {
  std::string name;
  std::vector<float> values;
};
struct NnFile {
  std::string kind;  // what wrote it ("ppo_discrete", ...)
  std::string meta;  // free text for the writer
  std::vector<SavedNet> nets;
  std::vector<SavedArray> arrays;

  const SavedNet& net(std::string_view name) const;      // DataError if absent
  const SavedArray& array(std::string_view name) const;  // DataError if absent
  bool has_array(std::string_view name) const;
};

inline constexpr std::uint32_t kNnFileVersion = 1;

std::string encode_nn_file(const NnFile& f);
// what names the source in errors.
NnFile decode_nn_file(std::string_view bytes, std::string_view what);
void save_nn_file(const std::filesystem::path& file, const NnFile& f);
NnFile load_nn_file(const std::filesystem::path& file);
// Whether the file starts with the network checkpoint magic.
bool is_nn_file(const std::filesystem::path& file);

}  // namespace dprl::nn
