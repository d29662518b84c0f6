// Fuzz target: the privacy ledger file (privacy_ledger.json) as Ledger::load_file reads it; a
// ledger that loads is also queried for what it has spent.
#include "engine/error.hpp"
#include "privacy/ledger.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dprl;
  const auto file = fuzz::put("ledger.json", fuzz::as_string(data, size));
  try {
    const auto ledger = privacy::Ledger::load_file(file);
    (void)ledger.spent_epsilon();
  } catch (const Error&) {
  }
  return 0;
}
