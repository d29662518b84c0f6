// End-to-end checks of `dprl privacy ...`: JSON output and one-line validation errors.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/privacy/reference.hpp"

namespace {

struct Run {
  int code;
  std::string out;
};

Run run(const std::string& args) {
  const std::string cmd = std::string(DPRL_EXE) + " privacy " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// No value anywhere in the output is JSON null (nlohmann writes null for inf and NaN).
bool has_null(const nlohmann::json& j) {
  if (j.is_null()) return true;
  if (j.is_structured()) {
    for (const auto& v : j) {
      if (has_null(v)) return true;
    }
  }
  return false;
}

nlohmann::json fixture_case(double z, double q, std::int64_t t) {
  std::ifstream f(DPRL_SOURCE_DIR "/tests/privacy/fixtures/dp_accounting.json");
  std::stringstream ss;
  ss << f.rdbuf();
  const nlohmann::json fx = nlohmann::json::parse(ss.str());  // alive for the loop
  for (const auto& c : fx["cases"]) {
    if (c["noise_multiplier"] == z && c["sampling_rate"] == q && c["steps"] == t) return c;
  }
  FAIL("fixture case missing");
  return {};
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("privacy epsilon / noise / gaussian / compose / svt-params / dirichlet --json") {
    auto r = run(
        "epsilon --noise-multiplier 0.35 --sampling-rate 1e-3 --steps 7000 --delta 1e-5 --json");
    REQUIRE(r.code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["accountant"] == "rdp");
    // independent: the RDP integrated numerically at the 156 orders (see reference.hpp)
    CHECK(j["epsilon"].get<double>() ==
          doctest::Approx(dprl::privacy::reference::dpsgd_rdp_epsilon(1e-3, 0.35, 7000, 1e-5))
              .epsilon(1e-7));
    r = run("epsilon -z 0.35 -q 1e-3 -T 7000 --delta 1e-5 --accountant pld --json");
    REQUIRE(r.code == 0);
    // dp_accounting 0.6.0's PLDAccountant on the same case (the fixture): 4e-8 apart or better
    CHECK(nlohmann::json::parse(r.out)["epsilon"].get<double>() ==
          doctest::Approx(fixture_case(0.35, 1e-3, 7000)["dp_accounting_pld_epsilon"].get<double>())
              .epsilon(1e-7));

    r = run("noise --epsilon 2 --sampling-rate 0.01 --steps 1000 --delta 1e-5 --json");
    REQUIRE(r.code == 0);
    j = nlohmann::json::parse(r.out);
    CHECK(j["achieved_epsilon"].get<double>() <= 2.0);

    r = run("gaussian --epsilon 0.5 --delta 1e-5 --json");
    REQUIRE(r.code == 0);
    CHECK(nlohmann::json::parse(r.out)["method"] == "classical");
    r = run("gaussian --epsilon 2 --delta 1e-5 --analytic --json");
    REQUIRE(r.code == 0);
    CHECK(nlohmann::json::parse(r.out)["sigma"].get<double>() > 0.0);

    r = run("compose --epsilon 0.1 --delta 1e-6 --count 100 --delta-slack 1e-5 --json");
    REQUIRE(r.code == 0);
    CHECK(nlohmann::json::parse(r.out)["basic"]["epsilon"].get<double>() == doctest::Approx(10.0));

    r = run("svt-params --epsilon 3 --delta 1e-5 --queries 25 --max-length 500 --pmin 0.02 --json");
    REQUIRE(r.code == 0);
    CHECK(nlohmann::json::parse(r.out).contains("threshold_shift"));

    r =
        run("dirichlet --k 5 --eta 0.1 --tau 0.02 --actions 2 --lipschitz 1 --adjacency 0.1 "
            "--samples 10000 --json");
    REQUIRE(r.code == 0);
    CHECK(nlohmann::json::parse(r.out).contains("delta_ci"));
  }

  TEST_CASE("degenerate results: +inf is the string \"inf\" - never null, never 0") {
    // z = 1e-160: 1 / (2 z^2) overflows; the RDP accountant used to report epsilon 0
    auto r = run("epsilon -z 1e-160 -q 0.01 -T 10 --delta 1e-5 --json");
    REQUIRE(r.code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["epsilon"] == "inf");
    CHECK_FALSE(has_null(j));
    // best where PLD's grid cannot hold the loss: PLD +inf, RDP's finite bound reported
    r = run("epsilon -z 0.02 -q 0.01 -T 3 --delta 1e-5 --accountant best --json");
    REQUIRE(r.code == 0);
    j = nlohmann::json::parse(r.out);
    CHECK(j["pld_epsilon"] == "inf");
    CHECK(j["epsilon"].get<double>() == j["rdp_epsilon"].get<double>());
    CHECK(j["epsilon"].get<double>() > 1000.0);
    // every subcommand, at inputs whose figures overflow
    for (const char* args :
         {"epsilon -z 0.01 -q 1 -T 10 --delta 1e-5 --accountant pld --json",
          "compose --epsilon 1e308 --delta 0 --count 10 --delta-slack 1e-5 --json",
          "svt-params --epsilon 1e308 --delta 1e-5 --queries 1 --max-length 1 --pmin 1 --json",
          "gaussian --epsilon 1e300 --delta 1e-5 --analytic --json",
          "dirichlet --k 5 --eta 0.1 --tau 0.02 --actions 3 --lipschitz 1e300 --adjacency 1e300 "
          "--samples 10 --json"}) {
      CAPTURE(args);
      r = run(args);
      REQUIRE(r.code == 0);
      CHECK_FALSE(has_null(nlohmann::json::parse(r.out)));
    }
    CHECK(nlohmann::json::parse(
              run("compose --epsilon 1e308 --delta 0 --count 10 --delta-slack 1e-5 --json")
                  .out)["advanced"]["epsilon"] == "inf");
  }

  TEST_CASE("privacy delta: the other side of epsilon, for every registered accountant") {
    for (const char* acc : {"rdp", "pld", "best"}) {
      CAPTURE(acc);
      auto r =
          run(std::string("epsilon -z 1 -q 0.01 -T 1000 --delta 1e-5 --json --accountant ") + acc);
      REQUIRE(r.code == 0);
      const double eps = nlohmann::json::parse(r.out)["epsilon"].get<double>();
      r = run("delta -z 1 -q 0.01 -T 1000 --epsilon " + nlohmann::json(eps).dump() +
              " --json --accountant " + acc);
      REQUIRE(r.code == 0);
      const auto j = nlohmann::json::parse(r.out);
      CHECK(j["accountant"] == acc);
      CHECK(j["epsilon"].get<double>() == eps);
      // the same curve read the other way: back to 1e-5 (to the curve's rounding)
      CHECK(j["delta"].get<double>() == doctest::Approx(1e-5).epsilon(1e-8));
      CHECK(j["delta"].get<double>() <= 1e-5 * (1 + 1e-8));
      if (std::string(acc) == "best") {
        CHECK(j["delta"] == std::min(j["rdp_delta"].get<double>(), j["pld_delta"].get<double>()));
      }
    }
    // the human form names the accountant; the default is rdp, like epsilon's
    const auto r = run("delta -z 1 -q 0.01 -T 1000 --epsilon 2");
    REQUIRE(r.code == 0);
    CHECK(r.out.rfind("delta = ", 0) == 0);
    CHECK(r.out.find("(rdp accountant; z = 1, q = 0.01, T = 1000, epsilon = 2)") !=
          std::string::npos);
    // --help lists the registered accountants
    CHECK(run("delta --help").out.find("rdp | pld | best") != std::string::npos);
  }

  TEST_CASE("invalid parameters: one line naming the parameter and rule - exit 2") {
    const char* bad[][2] = {
        {"epsilon -z nan -q 0.01 -T 10 --delta 1e-5", "--noise-multiplier = nan must be finite"},
        {"epsilon -z -1 -q 0.01 -T 10 --delta 1e-5", "--noise-multiplier = -1 must be >= 0"},
        {"epsilon -z 1 -q 1.5 -T 10 --delta 1e-5", "--sampling-rate = 1.5 must be in (0, 1]"},
        {"epsilon -z 1 -q 0.01 -T 0 --delta 1e-5", "--steps = 0 must be >= 1"},
        {"epsilon -z 1 -q 0.01 -T 10 --delta 1", "--delta = 1 must be in (0, 1)"},
        {"epsilon -z 1 -q 0.01 -T 10 --delta 1e-5 --accountant moments",
         "--accountant = 'moments'"},
        {"noise --epsilon 0 -q 0.01 -T 10 --delta 1e-5", "--epsilon = 0 must be > 0"},
        {"gaussian --epsilon 2 --delta 1e-5", "must be < 1 for the classical"},
        // impossible requests
        {"noise --epsilon 1e-9 -q 1 -T 1000000 --delta 1e-5", "no noise multiplier <= 1000000"},
        {"epsilon -z 0.5 -q 0.01 -T 10000000 --delta 1e-5 --accountant pld",
         "pld: 10000000 compositions need a loss grid"},
        {"dirichlet --k 1e300 --eta 0.1 --tau 0.02 --actions 2 --lipschitz 1 --adjacency 0.1 "
         "--samples 10",
         "k = 1e+300 must be in (0, 1e8]"},
        {"noise --epsilon 2 -q 0.01 -T 10 --delta 1e-5 --accountant moments",
         "--accountant = 'moments' is unknown"},
        {"delta -z 1 -q 0.01 -T 10 --epsilon -1", "--epsilon = -1 must be >= 0"},
        {"delta -z 1 -q 0.01 -T 10 --epsilon inf", "--epsilon = inf must be finite"},
        {"delta -z 1 -q 2 -T 10 --epsilon 1", "--sampling-rate = 2 must be in (0, 1]"},
        {"delta -z 1 -q 0.01 -T 10 --epsilon 1 --accountant x",
         "--accountant = 'x' is unknown (valid: rdp, pld, best)"},
    };
    for (auto& b : bad) {
      const Run r = run(b[0]);
      CAPTURE(b[0]);
      CHECK(r.code == 2);
      CHECK(r.out.find(b[1]) != std::string::npos);
      CHECK(r.out.rfind("dprl: ", 0) == 0);
      CHECK(r.out.find('\n') == r.out.size() - 1);
    }
  }
}
