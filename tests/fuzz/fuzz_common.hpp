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

// FNV-1a 64, the checksum of ledger and tabular policy files: targets that mutate what a checksum
// covers recompute it, or almost every input would stop at the mismatch. Network and checkpoint
// files start from 1469598103934665603 instead of the FNV offset basis 14695981039346656037 (a
// digit short; kept, or every saved file would stop loading): pass it as basis.
inline std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t basis = 0xcbf29ce484222325ULL) {
  std::uint64_t h = basis;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace dprl::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
