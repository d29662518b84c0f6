// End-to-end privacy properties of the expert-level pipeline (paper 000): nothing published names
// an expert, a recorded episode or a seed; the record's formal flag per release source; the
// directory's ledger composes redrawn stages; the default delta; audits on the protected data.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

#include "engine/data/dataset_io.hpp"
#include "engine/io.hpp"
#include "tests/tools/cli_test_util.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kSmokeConfig = std::string(DPRL_SOURCE_DIR) + "/configs/paper000/smoke.yaml";

using cli_test::scratch;

// One quick population for every case a process runs (built by the first, reused by the others);
// ctest runs each case in its own process, maybe at the same time, so the folder is per process.
fs::path shared_population() {
  static const fs::path p =
      scratch("population_" + std::to_string(::getpid())) / "population";
  return p;
}

const std::string kQuickPopulation =
    " --set population.ppo.train.steps=2000 --set population.action_floor=0.45"
    " --set population.demos.max_steps=20";

// The smoke pipeline on a quick population (32 experts after 2000 PPO steps each, episodes of at
// most 20 steps, action floor 0.45) at a release budget large enough for stable prefixes: with
// calibration exact, eps' ~ 2.8, so E[theta_hat] ~ 1.1 / 0.45 + (4 / eps') ln(1 / delta') ~ 13
// (delta' = 0.5 / (2 T L) = 1.25e-3) against a one-step count in [32 0.45, 32 0.55] = [14.4,
// 17.6]. No DP-SGD part (p = 0: stable steps only); seeded noise: the same release every time.
std::string quick_args(const fs::path& pop, const fs::path& out) {
  return "run " + kSmokeConfig + " --quiet --jobs 2 --out " + out.string() +
         " --set population.out=" + pop.string() + kQuickPopulation +
         " --set privacy.epsilon=10000"
         " --set privacy.delta=0.5 --set privacy.epsilon1_fraction=1"
         " --set release.calibration=exact --set selective.p=0 --set train.stable_steps=50";
}

nlohmann::json json_file(const fs::path& f) { return nlohmann::json::parse(dprl::read_file(f)); }

std::string le_bytes(std::uint64_t v) {
  std::string s(8, '\0');
  std::memcpy(s.data(), &v, 8);  // x86-64 and the HDF5 files are little-endian
  return s;
}

// Every file under dir (recursively, text and binary) searched for each needle; the hits.
std::vector<std::string> scan(const fs::path& dir, const std::vector<std::string>& needles) {
  std::vector<std::string> hits;
  for (const auto& f : fs::recursive_directory_iterator(dir)) {
    if (!f.is_regular_file()) continue;
    const std::string bytes = dprl::read_file(f.path());
    for (const auto& n : needles)
      if (bytes.find(n) != std::string::npos)
        hits.push_back(fs::relative(f.path(), dir).string() + ": " +
                       (n.size() == 8 ? "8 bytes" : n));
  }
  return hits;
}

// The demonstrations' identifiers: each episode's reset seed and the collection seed, as decimal
// text and as 8 little-endian bytes.
std::vector<std::string> identifiers(const fs::path& pop) {
  const dprl::Dataset demos = dprl::load_dataset(pop / "demos", "minari");
  std::set<std::uint64_t> ids;
  for (std::size_t e = 0; e < demos.num_episodes(); ++e)
    ids.insert(static_cast<std::uint64_t>(demos.episode_seed(e)));
  const auto meta = nlohmann::json::parse(demos.info().metadata_json);
  ids.insert(meta.at("collect_seed").get<std::uint64_t>());
  std::vector<std::string> out;
  for (std::uint64_t v : ids) {
    REQUIRE(v > 1000000000u);  // 63- and 64-bit values: no chance match as text
    out.push_back(std::to_string(v));
    out.push_back(le_bytes(v));
  }
  return out;
}

// stable/ holds each prefix under its position in stable/, no seed; release.json names no episode
void check_release_files(const fs::path& run) {
  const auto rel = json_file(run / "release" / "release.json");
  for (const auto& [k, v] : rel.items())
    CHECK(std::set<std::string>{"digest", "source", "stable_prefixes", "stable_transitions",
                                "examined", "stable_lengths", "privacy"}
              .count(k) == 1);
  const dprl::Dataset st = dprl::load_dataset(run / "release" / "stable", "minari");
  REQUIRE(st.num_episodes() == rel.at("stable_prefixes").get<std::size_t>());
  for (std::size_t e = 0; e < st.num_episodes(); ++e) {
    CHECK(st.user_id(e) == static_cast<std::int64_t>(e));
    CHECK(st.episode_seed(e) == -1);
    CHECK(rel.at("stable_lengths").at(e) == st.episode_length(e));
  }
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("no file of a pipeline run names an expert, a recorded episode or a seed") {
    const auto d = scratch("scan");
    const auto pop = shared_population();
    // the default source (fresh rollouts of the policies)
    const auto r = cli_test::run(quick_args(pop, d / "train"));
    INFO(r.err);
    REQUIRE(r.code == 0);
    REQUIRE(fs::exists(d / "train" / "release" / "stable"));  // something was released
    const auto ids = identifiers(pop);
    CHECK(scan(d / "train", ids) == std::vector<std::string>{});
    check_release_files(d / "train");
    const auto s = json_file(d / "train" / "summary.json");
    CHECK(s.at("privacy").at("details").at("parts").at("release").at("details").at("source") ==
          "policies");
    CHECK(r.err.find("warning") != std::string::npos);  // delta 0.5 >= 1/m
    // the recorded source: the same scan, and the record is not formal
    const auto r2 = cli_test::run(quick_args(pop, d / "recorded") +
                                  " --set release.source=recorded"
                                  " --set privacy.noise=os-entropy");
    INFO(r2.err);
    REQUIRE(r2.code == 0);
    CHECK(scan(d / "recorded", ids) == std::vector<std::string>{});
    check_release_files(d / "recorded");
    const auto p2 = json_file(d / "recorded" / "summary.json").at("privacy");
    CHECK(p2.at("formal") == false);
    CHECK(p2.at("details").at("parts").at("release").at("formal") == false);
    CHECK(
        p2.at("details").at("parts").at("release").at("details").at("note").get<std::string>().find(
            "recorded") != std::string::npos);
    // its private bookkeeping (each demonstration's prefix length) stays with the private data
    CHECK(fs::exists(pop / "release_private"));
    // a second run reuses that release: the same stable set, nothing drawn or charged again
    const auto ledger = dprl::read_file(d / "recorded" / "pipeline_ledger.json");
    fs::remove(d / "recorded" / "run.json");  // the train stage runs again, the release is reused
    fs::remove(d / "recorded" / "policy.bin");
    fs::remove(d / "recorded" / "summary.json");
    fs::remove(d / "recorded" / "metrics.csv");
    const auto r3 = cli_test::run(quick_args(pop, d / "recorded") +
                                  " --set release.source=recorded"
                                  " --set privacy.noise=os-entropy");
    INFO(r3.err);
    REQUIRE(r3.code == 0);
    CHECK(dprl::read_file(d / "recorded" / "pipeline_ledger.json") == ledger);
    // fresh rollouts with OS-entropy noise: formal
    const auto r4 =
        cli_test::run(quick_args(pop, d / "formal") + " --set privacy.noise=os-entropy");
    INFO(r4.err);
    REQUIRE(r4.code == 0);
    CHECK(scan(d / "formal", ids) == std::vector<std::string>{});
    CHECK(json_file(d / "formal" / "summary.json").at("privacy").at("formal") == true);
  }

  TEST_CASE("a redrawn release composes with the earlier draws in the directory's ledger") {
    const auto d = scratch("ledger");
    const auto pop = shared_population();
    // budget (12000, 0.5), each release (5000, 0.2): two draws fit, a third is refused
    const std::string args = quick_args(pop, d / "train") +
                             " --set privacy.epsilon=12000 --set privacy.epsilon1=5000"
                             " --set privacy.epsilon2=0 --set privacy.delta1=0.2";
    const auto r = cli_test::run(args);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const double e1 = json_file(d / "train" / "summary.json").at("privacy").at("epsilon");
    CHECK(e1 == doctest::Approx(5000).epsilon(1e-6));
    // another release config on the same directory: drawn anew, and the record composes both
    const auto r2 = cli_test::run(args + " --set release.trajectories=11");
    INFO(r2.err);
    REQUIRE(r2.code == 0);
    CHECK(r2.err.find("releasing anew") != std::string::npos);
    const auto p = json_file(d / "train" / "summary.json").at("privacy");
    CHECK(p.at("epsilon").get<double>() == doctest::Approx(2 * e1));
    CHECK(p.at("delta").get<double>() == doctest::Approx(2 * 0.2));
    CHECK(p.at("details").at("ledger").size() == 2);
    const auto led = json_file(d / "train" / "pipeline_ledger.json");
    CHECK(led.at("charges").size() == 2);
    // a third draw would exceed the budget: refused before drawing, the release kept
    const auto release = dprl::read_file(d / "train" / "release" / "release.json");
    const auto r3 = cli_test::run(args + " --set release.trajectories=12");
    CHECK(r3.code == 2);
    CHECK(cli_test::one_line(r3.err.substr(r3.err.rfind("dprl: "))));
    CHECK(r3.err.find("pipeline_ledger.json") != std::string::npos);
    CHECK(dprl::read_file(d / "train" / "release" / "release.json") == release);
  }

  TEST_CASE("default delta is 1/(10 m), and an audit on the protected data ends the formal record") {
    const auto d = scratch("audit");
    const auto pop = shared_population();
    // the smoke pipeline's DP-SGD part (eps2 = 2.5) with OS-entropy noise on the quick population
    const std::string args = "run " + kSmokeConfig + " --quiet --jobs 2 --out " + (d / "train").string() +
                             " --set population.out=" + pop.string() + kQuickPopulation +
                             " --set privacy.noise=os-entropy";
    const auto r = cli_test::run(args);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.err.find("warning") == std::string::npos);
    auto s = json_file(d / "train" / "summary.json");
    CHECK(s.at("privacy").at("delta").get<double>() == doctest::Approx(1.0 / 320));
    CHECK_FALSE(s.at("privacy").at("details").contains("audit"));
    // dprl audit run trains on the protected data again: the record is no longer formal and the
    // audit's outputs are not covered
    const auto au = cli_test::run("audit run " + (d / "train").string() +
                                  " --white-box --canaries 100 --guesses 100 --json");
    INFO(au.err);
    REQUIRE(au.code == 0);
    s = json_file(d / "train" / "summary.json");
    const auto& p = s.at("privacy");
    CHECK(p.at("formal") == false);
    CHECK(p.at("details").at("audit").get<std::string>().find("protected data") !=
          std::string::npos);
    for (const auto& c : p.at("covers")) {
      const std::string text = c;
      CHECK(text.find("audit.json") == std::string::npos);
      if (text.rfind("summary.json", 0) == 0) CHECK(text.find("except") != std::string::npos);
    }
    // the finished run is still reused (run.json follows the summary), nothing trained again
    const auto again = cli_test::run(args);
    INFO(again.err);
    CHECK(again.code == 0);
    CHECK(again.err.find("reusing it") != std::string::npos);
  }
}
