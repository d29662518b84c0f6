// End to end: `dprl run configs/paper003/smoke.yaml` trains its teacher, kickstarts a student and
// writes the guarantee record; bad kickstart input exits 2 with one line naming the key, before
// any run directory exists.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/io.hpp"

namespace fs = std::filesystem;

namespace {

struct KsResult {
  int code;
  std::string err;
};

KsResult ks_run(const std::string& args, const fs::path& dir) {
  const auto err = dir / "stderr.txt";
  const std::string cmd = std::string(DPRL_EXE) + " run " + args + " --quiet >/dev/null 2>'" +
                          err.string() + "' </dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, dprl::read_file(err)};
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("paper003 smoke config: teacher trained if missing, student, guarantee record") {
    const auto tmp =
        fs::temp_directory_path() / ("dprl_kickstart_cli_" + std::to_string(::getpid()));
    fs::remove_all(tmp);
    fs::create_directories(tmp);
    const std::string config = std::string(DPRL_SOURCE_DIR) + "/configs/paper003/smoke.yaml";
    const std::string teacher = "--set algo.params.teacher=" + (tmp / "t" / "teacher.bin").string();
    const auto out = tmp / "run";
    const auto r = ks_run("'" + config + "' --out '" + out.string() + "' " + teacher, tmp);
    REQUIRE(r.code == 0);
    CHECK(fs::exists(tmp / "t" / "teacher.bin"));
    const auto j = nlohmann::json::parse(dprl::read_file(out / "summary.json"));
    const auto& p = j["privacy"];
    CHECK(p["unit"] == "query");
    CHECK(p["neighbouring"] == "replace");
    CHECK(p["accountant"] == "basic");
    CHECK(p["formal"] == false);
    CHECK(p["reproducible_noise"] == true);
    CHECK(p["details"]["queries"] == j["env_steps"]);
    CHECK(p["details"]["totals"].contains("vacuous"));
    CHECK(p["details"]["per_query"][0]["k"] == 5.0);
    CHECK(dprl::read_file(out / "metrics.csv").rfind("step,episodes,train_return,", 0) == 0);

    // bad input: exit 2, one line naming the key, no run directory
    for (const char* bad : {"k0=0", "decay=1.5", "eta=0.5", "tau=0.2", "adjacency=0"}) {
      CAPTURE(bad);
      const auto o = tmp / "bad";
      const auto b = ks_run(
          "'" + config + "' --out '" + o.string() + "' " + teacher + " --set algo.params." + bad,
          tmp);
      CHECK(b.code == 2);
      const std::string key = std::string(bad).substr(0, std::string(bad).find('='));
      CHECK(b.err.find(key) != std::string::npos);
      CHECK(b.err.find('\n') == b.err.size() - 1);
      CHECK_FALSE(fs::exists(o));
    }
    // one spelling of the secure noise, os-entropy, as every other learner: the old os_entropy
    // is refused naming the key and the valid values
    const auto spelled = ks_run("'" + config + "' --out '" + (tmp / "bad").string() + "' " +
                                    teacher + " --set algo.params.noise=os_entropy",
                                tmp);
    CHECK(spelled.code == 2);
    CHECK(spelled.err.find("noise") != std::string::npos);
    CHECK(spelled.err.find("os-entropy, seeded") != std::string::npos);
    CHECK(spelled.err.find('\n') == spelled.err.size() - 1);
    CHECK_FALSE(fs::exists(tmp / "bad"));
    // a teacher for another env's spaces
    const auto acro = ks_run("'" + config + "' --out '" + (tmp / "bad").string() + "' " + teacher +
                                 " --set env.id=acrobot",
                             tmp);
    CHECK(acro.code == 2);
    CHECK(acro.err.find("teacher") != std::string::npos);
    CHECK_FALSE(fs::exists(tmp / "bad"));
    fs::remove_all(tmp);
  }
}
