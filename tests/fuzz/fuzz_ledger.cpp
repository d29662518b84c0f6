// Fuzz target: the privacy ledger file (privacy_ledger.json) as Ledger::load_file reads it; a
// ledger that loads is also queried for what it has spent. The input is loaded as it is, then,
// when it is a JSON object, again with its checksum made right (the loader's rule: FNV-1a 64 of the
// compact dump without "checksum"), so that mutations reach the budget, guarantee and charges
// that the checksum guards.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "engine/error.hpp"
#include "privacy/ledger.hpp"
#include "tests/fuzz/fuzz_common.hpp"

namespace {

std::optional<std::string> with_checksum(const std::string& text) {
  try {
    auto j = nlohmann::ordered_json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    j.erase("checksum");
    j["checksum"] = fmt::format("fnv1a64:{:016x}", dprl::fnv1a64(j.dump()));
    return j.dump();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

void load(const std::string& text) {
  using namespace dprl;
  const auto file = fuzz::put("ledger.json", text);
  try {
    const auto ledger = privacy::Ledger::load_file(file);
    (void)ledger.spent_epsilon();
  } catch (const Error& e) {
    fuzz::refused(e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = dprl::fuzz::as_string(data, size);
  load(text);
  if (const auto fixed = with_checksum(text)) load(*fixed);
  return 0;
}
