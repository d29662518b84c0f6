// Shared by the fuzz targets: a scratch folder per process for inputs that loaders read from files.
// A target returns normally on success and on dprl::Error (the documented way to refuse input);
// anything else (another exception, a crash, a sanitizer report) is a finding.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "engine/checksum.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"

namespace dprl::fuzz {

inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("dprl_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// writes bytes to scratch()/name (replacing what was there) and returns the path
inline std::filesystem::path put(const std::string& name, const std::string& bytes) {
  const auto p = scratch() / name;
  std::filesystem::remove_all(p);
  write_file_atomic(p, bytes);
  return p;
}

// Called with each refusal; prints it when DPRL_FUZZ_VERBOSE is set (naming regression inputs:
// `DPRL_FUZZ_VERBOSE=1 build/tests/fuzz/dprl_fuzz_TARGET FILE`).
inline void refused(const Error& e) {
  static const bool verbose = std::getenv("DPRL_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "refused: %s\n", e.what());
}

inline std::string as_string(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace dprl::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
