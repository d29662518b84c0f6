// End-to-end: every private learner audited with one command. `dprl run` with an audit: section
// and `dprl audit run RUN_DIR` for actor_critic, lsvi_ucb, ppo_kickstart and primorl (the
// offline learners: cli_audit_run_test.cpp; the expert-level pipeline: expert_level_cli_test.cpp),
// exit 3 when refuted, and one line with exit 2 for a learner with nothing to audit. The
// actor-critic settings are those of tests/algos/audit/release_audit_test.cpp (claim 1.657,
// measured 0.95 as run and 2.09 with half the noise).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/io.hpp"
#include "tests/tools/cli_test_util.hpp"

namespace fs = std::filesystem;

namespace {

fs::path audit_learners_scratch() {
  static const fs::path d = [] {
    auto p = fs::temp_directory_path() / ("dprl_audit_learners_" + std::to_string(::getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
  }();
  return d;
}

std::string write(const std::string& name, const std::string& text) {
  const auto f = audit_learners_scratch() / name;
  dprl::write_file_atomic(f, text);
  return f.string();
}

nlohmann::json audit_of(const fs::path& run) {
  return nlohmann::json::parse(dprl::read_file(run / "audit.json"));
}

using cli_test::one_line;
using cli_test::run;

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("actor_critic: dprl run with an audit section, dprl audit run refutes half noise") {
    const auto cfg = write("ac.yaml", R"(name: ac
seed: 1
env: {id: chain_mdp, params: {n: 40000, max_episode_steps: 10}}
algo:
  id: actor_critic
  params: {dp: actor, epsilon: 0.1, delta: 1.0e-6, episodes: 10, clip: fixed, accountant: pld,
           noise: seeded}
train: {steps: 100000, eval_every: 0, eval_episodes: 1}
audit: {white_box: true, canaries: 60000, guesses: 1000, seed: 0}
)");
    const auto dir = audit_learners_scratch() / "ac_run";
    auto r = run("run " + cfg + " --quiet --out " + dir.string());
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto a = audit_of(dir);
    CHECK(a["learner"] == "actor_critic");
    CHECK(a["mode"] == "white-box");
    CHECK(a["refuted"] == false);
    const auto s = nlohmann::json::parse(dprl::read_file(dir / "summary.json"));
    CHECK(a["epsilon_reported"] == s["privacy"]["epsilon"]);
    CHECK(s["audit"] == a);
    r = run("audit run " + dir.string() + " --mis-specify halve-noise --json");
    CHECK(r.code == 3);
    CHECK(r.err.find("REFUTES") != std::string::npos);
    CHECK(nlohmann::json::parse(r.out)["refuted"] == true);
    // the black-box mode does not apply: one line, exit 2
    r = run("audit run " + dir.string() + " --set audit.white_box=false");
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("white-box") != std::string::npos);
    // audit dpsgd is for the DP-SGD learners
    r = run("audit dpsgd " + cfg);
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("audit run") != std::string::npos);
  }

  TEST_CASE("lsvi_ucb and ppo_kickstart: dprl run with an audit section, then audit run") {
    const auto lsvi = write("lsvi.yaml", R"(name: lsvi
seed: 1
env: {id: linear_mdp, params: {kind: random, num_states: 5, num_actions: 4, dim: 8, horizon: 5}}
algo:
  id: lsvi_ucb
  params: {episodes: 32, batching: static, batches: 4, private: true, epsilon: 2, noise: seeded}
train: {steps: 1000, eval_every: 0, eval_episodes: 1}
audit: {white_box: true, canaries: 40, seed: 1}
)");
    const auto ldir = audit_learners_scratch() / "lsvi_run";
    auto r = run("run " + lsvi + " --quiet --out " + ldir.string());
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(audit_of(ldir)["learner"] == "lsvi_ucb");
    CHECK(audit_of(ldir)["canaries"] == 40);
    r = run("audit run " + ldir.string() + " --json --set audit.canaries=41");  // H d = 40
    CHECK(r.code == 2);
    CHECK(one_line(r.err));

    const auto kick = write("kick.yaml", R"(name: kick
seed: 1
env: {id: CartPole-v1}
algo:
  id: ppo_kickstart_spinup
  params: {hidden_size: 16, teacher: )" + (audit_learners_scratch() / "teacher.bin").string() +
                                             R"(,
           teacher_train_steps: 2048, teacher_hidden_size: 16, noise: seeded}
train: {steps: 2000, eval_every: 0, eval_episodes: 1}
audit: {samples: 20000, seed: 1}
)");
    const auto kdir = audit_learners_scratch() / "kick_run";
    r = run("run " + kick + " --quiet --out " + kdir.string());
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto k = audit_of(kdir);
    CHECK(k["mode"] == "mechanism");
    CHECK(k["samples"] == 20000);
    CHECK(k["refuted"] == false);
    r = run("audit run " + kdir.string() + " --json --set audit.samples=30000");
    CHECK(r.code == 0);
    CHECK(nlohmann::json::parse(r.out)["samples"] == 30000);
  }

  TEST_CASE("primorl: dprl audit dpsgd on the smoke config") {
    const auto r = run("audit dpsgd " + std::string(DPRL_SOURCE_DIR) +
                       "/configs/paper004/smoke.yaml --white-box --canaries 200 --guesses 40 "
                       "--steps 10 --json");
    INFO(r.err);
    CHECK(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["learner"] == "primorl");
    CHECK(j["rounds"] == 10);
  }

  TEST_CASE("a learner with no private release: one line, exit 2, nothing written") {
    const auto cfg = std::string(DPRL_SOURCE_DIR) + "/configs/quickstart.yaml";
    const auto dir = audit_learners_scratch() / "q_run";
    auto r = run("run " + cfg + " --quiet --out " + dir.string() + " --set audit.canaries=10");
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("no private release") != std::string::npos);
    CHECK_FALSE(fs::exists(dir));
  }
}
