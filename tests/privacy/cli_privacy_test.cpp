// End-to-end checks of `dprl privacy ...`: JSON output and one-line validation errors.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

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

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("privacy epsilon / noise / gaussian / compose / svt-params / dirichlet --json") {
    auto r = run(
        "epsilon --noise-multiplier 0.35 --sampling-rate 1e-3 --steps 7000 --delta 1e-5 --json");
    REQUIRE(r.code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["accountant"] == "rdp");
    CHECK(j["epsilon"].get<double>() == doctest::Approx(22.836).epsilon(1e-4));

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
