// Fuzz target: `dprl env replay` cases (CASE.json text), through the function the command runs.
#include "engine/error.hpp"
#include "tests/fuzz/fuzz_common.hpp"
#include "tools/cli_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    dprl::cli::replay_case(dprl::fuzz::as_string(data, size), "case.json");
  } catch (const dprl::Error& e) {
    dprl::fuzz::refused(e);
  }
  return 0;
}
