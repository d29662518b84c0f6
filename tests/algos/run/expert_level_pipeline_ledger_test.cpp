// The expert-level pipeline's persistent ledger (algos/run/pipeline_ledger.hpp).
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "algos/run/pipeline_ledger.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"

using namespace dprl;
using namespace dprl::algos;
namespace fs = std::filesystem;

namespace {

fs::path ledger_scratch(const char* name) {
  const fs::path d = fs::temp_directory_path() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("pipeline ledger: draws compose by basic composition across reopenings" *
          doctest::test_suite("unit")) {
  const fs::path d = ledger_scratch("dprl_pipeline_ledger_test");
  {
    PipelineLedger l(d, 10, 1e-4);
    CHECK(l.epsilon() == 0);
    CHECK_FALSE(fs::exists(d / PipelineLedger::kFileName));  // nothing until a charge
    const auto i = l.charge({"release", "r1", "DataRelease", 4.0, 3e-5});
    CHECK(i == 0);
    l.charge({"train", "c1", "DP-SGD", 3.0, 1e-5});
    CHECK(l.epsilon() == doctest::Approx(7.0));
    CHECK(l.delta() == doctest::Approx(4e-5));
    l.settle(1, 2.5);  // what the stage spent
    l.settle(1, 2.9);  // never raised
    CHECK(l.epsilon() == doctest::Approx(6.5));
  }
  // a redrawn release on the same directory composes with the earlier draws
  PipelineLedger l(d, 10, 1e-4);
  REQUIRE(l.charges().size() == 2);
  CHECK(l.epsilon() == doctest::Approx(6.5));
  CHECK(l.last_of("train", "c1") == std::optional<std::size_t>(1));
  CHECK_FALSE(l.last_of("release", "r1"));  // not the last charge
  l.charge({"release", "r2", "DataRelease", 3.5, 3e-5});
  CHECK(l.epsilon() == doctest::Approx(10.0));
  // beyond the budget: refused, nothing charged, the file unchanged
  const std::string before = read_file(d / PipelineLedger::kFileName);
  CHECK_THROWS_WITH_AS(l.charge({"train", "c1", "DP-SGD", 0.1, 1e-6}),
                       doctest::Contains("pipeline_ledger.json"), BudgetExceeded);
  CHECK(l.charges().size() == 3);
  CHECK(read_file(d / PipelineLedger::kFileName) == before);
  PipelineLedger tight(d, 100, 7e-5);  // delta is composed too
  CHECK_THROWS_AS(tight.charge({"train", "c1", "DP-SGD", 0.1, 1e-5}), BudgetExceeded);
}

TEST_CASE("pipeline ledger: a damaged file is refused, never reset" * doctest::test_suite("unit")) {
  const fs::path d = ledger_scratch("dprl_pipeline_ledger_damaged");
  PipelineLedger(d, 10, 1e-4).charge({"release", "r", "DataRelease", 4.0, 1e-5});
  auto j = nlohmann::ordered_json::parse(read_file(d / PipelineLedger::kFileName));
  j["charges"][0]["epsilon"] = 0.5;  // a smaller figure without its checksum
  write_file_atomic(d / PipelineLedger::kFileName, j.dump());
  CHECK_THROWS_WITH_AS(PipelineLedger(d, 10, 1e-4), doctest::Contains("damaged"), DataError);
  write_file_atomic(d / PipelineLedger::kFileName, "{\"charges\": [");
  CHECK_THROWS_AS(PipelineLedger(d, 10, 1e-4), DataError);
}
