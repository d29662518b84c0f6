// End-to-end tests of dprl audit: JSON fields, exit 0 when the claim stands, 3 when refuted,
// 2 with one line naming the flag on bad input. Sample sizes as in
// tests/privacy/mechanism_audit_test.cpp (which derives why they cannot flake).
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/io.hpp"
#include "tests/tools/cli_test_util.hpp"

namespace fs = std::filesystem;

namespace {

cli_test::Result audit_cmd(const std::string& args) { return cli_test::run("audit " + args); }

using cli_test::one_line;

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE(
      "dprl audit mechanism: correct Gaussian stands (exit 0) and halved noise is refuted (exit "
      "3)") {
    const std::string base =
        "mechanism --mechanism gaussian --noise-multiplier 1 --delta 1e-5 --samples 200000 "
        "--seed 7 --confidence 0.999999 --json";
    const auto ok = audit_cmd(base);
    CAPTURE(ok.err);
    REQUIRE(ok.code == 0);
    const auto j = nlohmann::json::parse(ok.out);
    for (const char* k :
         {"epsilon_claimed", "epsilon_lower", "confidence", "refuted", "samples", "best_event"}) {
      CHECK(j.contains(k));
    }
    CHECK(j["refuted"] == false);
    CHECK(j["samples"] == 200000);
    CHECK(j["best_event"].contains("threshold"));
    const auto bad = audit_cmd(base + " --mis-specify halve-noise");
    CHECK(bad.code == 3);
    CHECK(nlohmann::json::parse(bad.out)["refuted"] == true);
    CHECK(one_line(bad.err));
    CHECK(bad.err.find("REFUTES") != std::string::npos);
  }

  TEST_CASE("dprl audit mechanism: an explicit claim below the truth is refuted") {
    // Laplace epsilon = 1 certifies 0.96 at n = 200000 (confidence 1 - 1e-6): a claim of 0.5 is
    // refuted
    const auto r = audit_cmd(
        "mechanism --mechanism laplace --epsilon 1 --claim-epsilon 0.5 --samples 200000 --seed 7 "
        "--confidence 0.999999 --json --pair 0,1");
    CHECK(r.code == 3);
    CHECK(nlohmann::json::parse(r.out)["epsilon_claimed"] == 0.5);
  }

  TEST_CASE("dprl audit dpsgd: correct noise stands and halved noise is refuted") {
    const std::string base =
        "dpsgd --canaries 100000 --steps 4 --noise-multiplier 4 --examples 32 --guesses 2000 "
        "--white-box --json";
    const auto ok = audit_cmd(base);
    CAPTURE(ok.err);
    CHECK(ok.code == 0);
    const auto j = nlohmann::json::parse(ok.out);
    CHECK(j["mode"] == "white-box");
    CHECK(j["canaries"] == 100000);
    CHECK(audit_cmd(base + " --mis-specify halve-noise").code == 3);
  }

  TEST_CASE("dprl audit: bad input exits 2 with one line naming the flag") {
    struct Case {
      const char* args;
      const char* flag;
    };
    for (const Case& c : {Case{"mechanism --mechanism cauchy --noise-multiplier 1", "--mechanism"},
                          Case{"mechanism --noise-multiplier -1", "--noise-multiplier"},
                          Case{"mechanism --noise-multiplier 1 --samples 0", "--samples"},
                          Case{"mechanism --noise-multiplier 1 --pair 1", "--pair"},
                          Case{"mechanism --noise-multiplier 1 --confidence 2", "--confidence"},
                          Case{"mechanism --noise-multiplier 1 --mis-specify x", "--mis-specify"},
                          Case{"dpsgd --canaries 1", "--canaries"},
                          Case{"dpsgd --noise-multiplier 0", "--noise-multiplier"}}) {
      CAPTURE(c.args);
      const auto r = audit_cmd(c.args);
      CAPTURE(r.err);
      CHECK(r.code == 2);
      CHECK(one_line(r.err));
      CHECK(r.err.find(c.flag) != std::string::npos);
    }
  }
}
