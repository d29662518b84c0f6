// End to end: `dprl env replay` reproduces every Gymnasium parity fixture of tests/envs/fixtures
// (written by tools/fixtures/gen_classic_fixtures.py) exactly, through the executable and its JSON
// output rather than the library. Each fixture is reduced to the replay case the CLI documents
// (env, params, state, actions); its recorded steps must come back with float32-identical
// observations, identical float64 rewards and identical flags. The hiv/ subfolder is not replayed
// here: those fixtures are tolerance-based (odeint parity) and tests/envs/hiv_test.cpp checks them.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

fs::path fixture_dir() { return fs::path(DPRL_SOURCE_DIR) / "tests" / "envs" / "fixtures"; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// every replay fixture (a JSON object with env, actions and expected steps) directly in the
// fixture folder; taxi_model.json (the transition table) is not a replay case
std::vector<fs::path> replay_fixtures() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fixture_dir())) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    const json c = json::parse(slurp(e.path()));
    if (c.is_object() && c.contains("env") && c.contains("actions") && c.contains("expected"))
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// a per-process scratch folder, removed when the process exits
struct Scratch {
  fs::path dir;
  Scratch()
      : dir(fs::temp_directory_path() /
            ("dprl_replay_fixtures_test_" + std::to_string(static_cast<long>(::getpid())))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

const fs::path& replay_scratch() {
  static const Scratch s;
  return s.dir;
}

// Writes the CLI case for one fixture, runs `dprl env replay` on it and checks every step. Checks
// are non-fatal so every fixture is reported; a fixture stops at its first mismatch.
void check_fixture(const fs::path& fixture) {
  const json f = json::parse(slurp(fixture));
  json c = json::object();
  c["env"] = f["env"];
  if (f.contains("params")) c["params"] = f["params"];
  c["state"] = f["state"];
  c["actions"] = f["actions"];
  const std::string stem = fixture.stem().string();
  const fs::path case_file = replay_scratch() / (stem + ".case.json");
  const fs::path out_file = replay_scratch() / (stem + ".out.json");
  const fs::path err_file = replay_scratch() / (stem + ".err.txt");
  {
    std::ofstream o(case_file, std::ios::binary);
    o << c.dump();
  }
  const std::string cmd = std::string(DPRL_EXE) + " env replay " + case_file.string() + " >" +
                          out_file.string() + " 2>" + err_file.string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  const bool exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  CHECK_MESSAGE(exited_ok, "dprl env replay failed: ", slurp(err_file));
  if (!exited_ok) return;
  const json got = json::parse(slurp(out_file), nullptr, /*allow_exceptions=*/false);
  const bool has_steps = got.is_object() && got.contains("steps") && got["steps"].is_array();
  CHECK_MESSAGE(has_steps, "stdout is not {\"steps\": [...]}");
  if (!has_steps) return;
  const json& g = got["steps"];
  const json& want = f["expected"]["steps"];
  CHECK(g.size() == want.size());
  for (std::size_t i = 0; i < std::min(g.size(), want.size()); ++i) {
    CAPTURE(i);
    const auto go = g[i]["obs"].get<std::vector<double>>();
    const auto wo = want[i]["obs"].get<std::vector<double>>();
    bool same = go.size() == wo.size();
    CHECK(go.size() == wo.size());
    for (std::size_t k = 0; same && k < wo.size(); ++k) {
      CAPTURE(k);
      same = static_cast<float>(go[k]) == static_cast<float>(wo[k]);
      CHECK(static_cast<float>(go[k]) == static_cast<float>(wo[k]));
    }
    const bool reward = g[i]["reward"].get<double>() == want[i]["reward"].get<double>();
    CHECK(g[i]["reward"].get<double>() == want[i]["reward"].get<double>());
    const bool term = g[i]["terminated"].get<bool>() == want[i]["terminated"].get<bool>();
    CHECK(g[i]["terminated"].get<bool>() == want[i]["terminated"].get<bool>());
    const bool trunc = g[i]["truncated"].get<bool>() == want[i]["truncated"].get<bool>();
    CHECK(g[i]["truncated"].get<bool>() == want[i]["truncated"].get<bool>());
    if (!(same && reward && term && trunc)) return;  // later steps diverge anyway
  }
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("env replay reproduces every Gymnasium parity fixture exactly") {
    const auto fixtures = replay_fixtures();
    REQUIRE(fixtures.size() >= 15);
    for (const auto& p : fixtures) {
      INFO("fixture: ", p.filename().string());
      check_fixture(p);
    }
  }
}
