// End-to-end tests of the training audits from the CLI: an experiment's `audit:` section in
// `dprl run`, `dprl audit dpsgd CONFIG` and `dprl audit run RUN_DIR` (audit.json and the
// summary's "audit"), exit 3 when refuted, exit 2 with one line on bad input. The settings are
// those of tests/algos/offline/offline_audit_test.cpp (white box, full batch, z = 4, T = 4:
// claim 1.993; measured 1.18 as run, 2.54 with half the noise).
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/data/dataset_io.hpp"
#include "engine/io.hpp"
#include "tests/algos/offline/offline_test_util.hpp"
#include "tests/tools/cli_test_util.hpp"

namespace fs = std::filesystem;

namespace {

fs::path audit_run_scratch() {
  static const fs::path d = [] {
    auto p = fs::temp_directory_path() / ("dprl_audit_run_" + std::to_string(::getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
  }();
  return d;
}

using cli_test::one_line;

// 10 CartPole episodes, each its own user, and a private bc experiment with a white-box audit
std::string experiment(bool with_audit = true) {
  const auto data = audit_run_scratch() / "data";
  if (!fs::exists(data))
    dprl::save_minari(
        dprl::testing::rollout_dataset("cartpole", dprl::testing::cartpole_expert, 10, 10, 0.05, 9),
        data);
  const auto cfg = audit_run_scratch() / (with_audit ? "bc_audit.yaml" : "bc_plain.yaml");
  dprl::write_file_atomic(cfg, R"(name: bc_audit
seed: 1
env: {id: cartpole}
algo:
  id: bc
  params: {hidden_sizes: "128,128", batch_size: 10, dp: true, noise_multiplier: 4.0,
           epsilon: 10.0, delta: 1.0e-5, accountant: pld, noise: seeded}
data: {path: )" + data.string() + R"(}
train: {steps: 4, eval_every: 4, eval_episodes: 1}
)" + (with_audit ? "audit: {canaries: 16000, guesses: 600, white_box: true, seed: 0}\n" : ""));
  return cfg.string();
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("dprl run with an audit section writes audit.json, audit run refutes half noise") {
    const std::string cfg = experiment();
    const auto run = (audit_run_scratch() / "run").string();
    auto r = cli_test::run("run " + cfg + " --quiet --out " + run);
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("audit: epsilon_lower") != std::string::npos);
    const auto audit = nlohmann::json::parse(dprl::read_file(fs::path(run) / "audit.json"));
    CHECK(audit["mode"] == "white-box");
    CHECK(audit["refuted"] == false);
    CHECK(audit["canaries"] == 16000);
    CHECK(audit["confidence"] == 0.95);
    const auto summary = nlohmann::json::parse(dprl::read_file(fs::path(run) / "summary.json"));
    CHECK(summary["audit"] == audit);
    CHECK(audit["epsilon_reported"] == summary["privacy"]["epsilon"]);
    CHECK(audit["epsilon_claimed"].get<double>() ==
          doctest::Approx(summary["privacy"]["epsilon"].get<double>()).epsilon(1e-9));
    CHECK(audit["epsilon_lower"].get<double>() < audit["epsilon_claimed"].get<double>());
    // the audit trained on the protected data again, uncharged: the record says so, is not
    // formal, and covers no audit output
    auto audited_record = [](const nlohmann::json& p) {
      CHECK(p["formal"] == false);
      CHECK(p["details"]["audit"].get<std::string>().find("protected data") != std::string::npos);
      for (const auto& c : p["covers"]) {
        const std::string text = c;
        CHECK(text.find("audit.json") == std::string::npos);
        if (text.rfind("summary.json", 0) == 0) CHECK(text.find("except") != std::string::npos);
      }
    };
    audited_record(summary["privacy"]);
    // a run without an audit section, audited afterwards by dprl audit run: the same
    const auto plain = (audit_run_scratch() / "plain").string();
    REQUIRE(cli_test::run("run " + experiment(false) + " --quiet --out " + plain).code == 0);
    const auto before = nlohmann::json::parse(dprl::read_file(fs::path(plain) / "summary.json"));
    CHECK_FALSE(before["privacy"]["details"].contains("audit"));
    REQUIRE(cli_test::run("audit run " + plain + " --json").code == 0);
    audited_record(
        nlohmann::json::parse(dprl::read_file(fs::path(plain) / "summary.json"))["privacy"]);

    // the same configuration run with half the noise: refuted, exit 3, files updated
    r = cli_test::run("audit run " + run + " --mis-specify halve-noise --json");
    CAPTURE(r.err);
    CHECK(r.code == 3);
    CHECK(r.err.find("REFUTES") != std::string::npos);
    const auto refuted = nlohmann::json::parse(r.out);
    CHECK(refuted["refuted"] == true);
    CHECK(refuted["mis_specify"] == "halve-noise");
    CHECK(nlohmann::json::parse(dprl::read_file(fs::path(run) / "audit.json")) == refuted);
    CHECK(nlohmann::json::parse(dprl::read_file(fs::path(run) / "summary.json"))["audit"] ==
          refuted);

    // as run: stands, exit 0
    r = cli_test::run("audit run " + run + " --json");
    CHECK(r.code == 0);
    CHECK(nlohmann::json::parse(r.out)["refuted"] == false);
  }

  TEST_CASE("dprl audit dpsgd CONFIG: the experiment's learner, flags over its audit section") {
    const std::string cfg = experiment();
    auto r = cli_test::run("audit dpsgd " + cfg + " --json");
    CHECK(r.code == 0);
    CHECK(nlohmann::json::parse(r.out)["learner"] == "bc");
    r = cli_test::run("audit dpsgd " + cfg + " --mis-specify double-sensitivity --json");
    CHECK(r.code == 3);
    CHECK(nlohmann::json::parse(r.out)["mis_specify"] == "double-sensitivity");
  }

  TEST_CASE("training audits: bad input is one line, exit 2, nothing written") {
    const std::string cfg = experiment();
    auto r = cli_test::run("audit run " + (audit_run_scratch() / "no_such_run").string());
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    r = cli_test::run("audit dpsgd " + cfg + " --set audit.colour=red");
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("colour") != std::string::npos);
    r = cli_test::run("audit dpsgd " + cfg + " --set algo.params.dp=false");
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("not private") != std::string::npos);
    r = cli_test::run("audit dpsgd " + cfg + " --noise-multiplier 2");
    CHECK(r.code == 2);
    CHECK(r.err.find("--noise-multiplier") != std::string::npos);
    const auto run = audit_run_scratch() / "bad_run";
    r = cli_test::run("run " + cfg + " --quiet --out " + run.string() + " --set audit.canaries=1");
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK_FALSE(fs::exists(run));
    // more white-box canaries than the network's 17410 parameters: refused before training
    r = cli_test::run("run " + cfg + " --quiet --out " + run.string() + " --set audit.canaries=20000");
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("17410") != std::string::npos);
    CHECK_FALSE(fs::exists(run));
    // a finished non-private run has no claim to audit
    const auto plain = audit_run_scratch() / "plain_run";
    REQUIRE(cli_test::run("run " + experiment(false) + " --quiet --out " + plain.string() +
                     " --set algo.params.dp=false")
                .code == 0);
    r = cli_test::run("audit run " + plain.string());
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK_FALSE(fs::exists(plain / "audit.json"));
  }
}
