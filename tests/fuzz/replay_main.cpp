// Replays a fuzz corpus through a target without libFuzzer: every file named on the command line,
// or every file inside a folder named there, is fed to LLVMFuzzerTestOneInput once. The ctest
// label `fuzz` runs this in the normal (and the sanitizer) build; tools/fuzz.sh runs the real
// fuzzer built with clang.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/io.hpp"
#include "tests/fuzz/fuzz_common.hpp"

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path p = argv[i];
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string bytes = dprl::read_file(f);
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs\n", files.size());
  std::filesystem::remove_all(dprl::fuzz::scratch());
  return files.empty() ? 1 : 0;
}
