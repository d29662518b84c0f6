#include "algos/actor_critic/actor_critic.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "algos/actor_critic/gtd_learner.hpp"
#include "algos/run/experiment.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "privacy/accountant.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/ledger.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/secure_release.hpp"
#include "privacy/table_gaussian.hpp"
#include "tests/test_util.hpp"

namespace fs = std::filesystem;
using dprl::algos::ActorCriticParams;
using dprl::algos::GtdActorCriticLearner;
using dprl::algos::OneHotFeatures;

namespace {

// per process: test runs of other checkouts share the temporary directory
fs::path ac_temp_dir(const std::string& name) {
  return fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
}

std::span<const float> obs_of(const float& s) { return {&s, 1}; }

dprl::algos::RunOptions ac_quiet(const fs::path& out) {
  dprl::algos::RunOptions o;
  o.out = out;
  o.progress = dprl::Progress::Mode::kOff;
  return o;
}

using test_util::gdp_epsilon;

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("GTD(lambda) actor-critic matches a hand-computed two-state example") {
    ActorCriticParams p;
    p.alpha_v = 0.1;
    p.alpha_w = 0.2;
    p.alpha_u = 0.3;
    p.lambda = 0.5;
    p.gamma = 0.9;
    OneHotFeatures f(2, 2);
    GtdActorCriticLearner l(p, f, 2, false, false, 0.0, nullptr);
    l.begin_episode();
    const float s0 = 0, s1 = 1;
    // step 1: s=0, a=1, rho=1, r=1, s'=1. delta=1, e_v=[1,0], v=[0.1,0], w=[0.2,0],
    // grad log pi = [-0.5, 0.5, 0, 0] = e_u, u = 0.3 e_u
    l.update(obs_of(s0), 1, 1.0, 1.0, false, obs_of(s1));
    CHECK(l.v[0] == doctest::Approx(0.1).epsilon(1e-14));
    CHECK(l.v[1] == 0.0);
    CHECK(l.w[0] == doctest::Approx(0.2).epsilon(1e-14));
    CHECK(l.u[0] == doctest::Approx(-0.15).epsilon(1e-14));
    CHECK(l.u[1] == doctest::Approx(0.15).epsilon(1e-14));
    // step 2: s=1, a=0, rho=0.5, r=0, s'=0. delta = 0.9*0.1 - 0 = 0.09;
    // e_v = 0.5 ([0,1] + 0.45 [1,0]) = [0.225, 0.5]; w.e_v = 0.045;
    // correction = 0.9 * 0.5 * 0.045 = 0.02025 on x_s' = x_0, so d_v = [0, 0.045], v = [0.1,
    // 0.0045]; w += 0.2 * 0.09 * e_v - 0.2 * (w.x_1 = 0) x_1 = [0.20405, 0.009]; grad = [0, 0, 0.5,
    // -0.5]; e_u = 0.5 (grad + 0.45 [-0.5, 0.5, 0, 0]) =
    // [-0.1125, 0.1125, 0.25, -0.25]; u += 0.3 * 0.09 * e_u
    l.update(obs_of(s1), 0, 0.5, 0.0, false, obs_of(s0));
    CHECK(l.ev[0] == doctest::Approx(0.225).epsilon(1e-14));
    CHECK(l.ev[1] == doctest::Approx(0.5).epsilon(1e-14));
    CHECK(std::fabs(l.v[0] - 0.1) < 1e-15);
    CHECK(l.v[1] == doctest::Approx(0.0045).epsilon(1e-12));
    CHECK(l.w[0] == doctest::Approx(0.20405).epsilon(1e-12));
    CHECK(l.w[1] == doctest::Approx(0.009).epsilon(1e-12));
    CHECK(l.u[0] == doctest::Approx(-0.15 - 0.027 * 0.1125).epsilon(1e-12));
    CHECK(l.u[1] == doctest::Approx(0.15 + 0.027 * 0.1125).epsilon(1e-12));
    CHECK(l.u[2] == doctest::Approx(0.027 * 0.25).epsilon(1e-12));
    CHECK(l.u[3] == doctest::Approx(-0.027 * 0.25).epsilon(1e-12));
    // termination cuts the bootstrap: delta = r - v(s)
    l.begin_episode();
    const double v0 = l.v[0];
    l.update(obs_of(s0), 0, 1.0, 2.0, true, obs_of(s1));
    CHECK(l.v[0] == doctest::Approx(v0 + 0.1 * (2.0 - v0)).epsilon(1e-12));
  }

  TEST_CASE("the actor's log-softmax gradient matches finite differences") {
    ActorCriticParams p;
    p.lambda = 0;
    OneHotFeatures f(3, 4);
    dprl::Rng rng(5);
    GtdActorCriticLearner l(p, f, 4, false, false, 0.0, nullptr);
    for (double& x : l.u) x = rng.normal();
    const float s = 1;
    const int a = 2;
    // after one update from zero traces with rho = 1 and lambda = 0, e_u is grad log pi(a|s)
    auto u0 = l.u;
    l.update(obs_of(s), a, 1.0, 0.0, true, obs_of(s));
    std::vector<double> pi(4), pref(4);
    auto logpi = [&](std::vector<double> u) {
      dprl::algos::softmax_policy(f, obs_of(s), u, pi, pref);
      return std::log(pi[a]);
    };
    const double h = 1e-6;
    for (std::size_t i = 0; i < u0.size(); ++i) {
      auto up = u0, dn = u0;
      up[i] += h;
      dn[i] -= h;
      const double fd = (logpi(up) - logpi(dn)) / (2 * h);
      // central differences: error O(h^2) ~ 1e-12 plus rounding ~ 1e-16 / h = 1e-10
      CHECK(std::fabs(l.eu[i] - fd) < 1e-8);
    }
  }

  TEST_CASE("median_abs over the support and over all elements") {
    std::vector<double> scratch;
    const std::vector<double> x = {0, -3, 0, 1, 2, 0};
    CHECK(dprl::algos::median_abs(x, {1, 3, 4}, false, scratch) == 2.0);
    CHECK(dprl::algos::median_abs(x, {1, 3}, false, scratch) == 2.0);
    CHECK(dprl::algos::median_abs(x, {}, true, scratch) == 0.5);
    CHECK(dprl::algos::median_abs(x, {}, false, scratch) == 0.0);
  }

  TEST_CASE("a median clip that underflows is raised to 2^-512, and secure noise still releases it") {
    // a Taxi run with os-entropy noise stopped at random on "the grid ... is below the normal
    // range" when its median element was subnormal: the data's values decided whether it ran
    ActorCriticParams p;  // clip = median over the support
    OneHotFeatures f(4, 1);
    auto noise = dprl::privacy::make_os_entropy_noise();
    GtdActorCriticLearner l(p, f, 1, true, false, 1.0, noise.get());
    std::vector<double> x = {3e-309, -4e-309, 5e-309, 0.0};
    double c = 0;
    REQUIRE_NOTHROW(c = l.privatise(x, {0, 1, 2}));
    CHECK(c == 0x1p-512);
    for (double e : x) CHECK(std::isfinite(e));
    std::vector<double> y = {3e-309, -4e-309, 5e-309, 0.0};
    REQUIRE_NOTHROW(c = l.privatise_sparse(y, {0, 1, 2}));
    CHECK(c == 0x1p-512);
    // an ordinary median is not touched, and a zero vector is still not released
    std::vector<double> z = {3.0, -4.0, 5.0, 0.0};
    CHECK(l.privatise(z, {0, 1, 2}) == 4.0);
    std::vector<double> zero(4, 0.0);
    CHECK(l.privatise(zero, {0, 1, 2}) == 0.0);
    CHECK(zero == std::vector<double>(4, 0.0));
  }
}

TEST_SUITE("statistical") {
  TEST_CASE("privatised vectors have norm C plus N(0 sigma^2 C^2) noise") {
    ActorCriticParams p;
    p.clip = "fixed";
    p.clip_norm = 2.0;
    OneHotFeatures f(1, 1);
    auto noise = dprl::privacy::make_seeded_noise(11);
    const double sigma = 0.5;
    GtdActorCriticLearner l(p, f, 1, true, false, sigma, noise.get());
    const int n = 200000;
    std::vector<double> x(n, 0.0);
    x[0] = 3.0;
    x[1] = 4.0;  // norm 5, rescaled to norm 2: [1.2, 1.6, 0...]
    CHECK(l.privatise(x, {0, 1}) == 2.0);
    double s = 0, s2 = 0;
    for (int i = 2; i < n; ++i) {
      s += x[i];
      s2 += x[i] * x[i];
    }
    const double m = n - 2, sd = sigma * 2.0;
    // mean 0 with sd sd/sqrt(m); E[x^2] = sd^2 with sd 2^(1/2) sd^2 / sqrt(m); z = 4.89 (p = 1e-6)
    CHECK(std::fabs(s / m) < 4.89 * sd / std::sqrt(m));
    CHECK(std::fabs(s2 / m - sd * sd) < 4.89 * std::sqrt(2.0) * sd * sd / std::sqrt(m));
  }

  TEST_CASE("secure privatised vectors: median clip, noise sd between sigma C and 0.8% more") {
    // the varying-width release: the snapping cover (<= 2^-12) and the ladder (<= 2^-7) widen
    // the noise, never narrow it; 2000 releases of 200 values with C changing every time
    ActorCriticParams p;  // clip = median
    OneHotFeatures f(200, 1);
    auto noise = dprl::privacy::make_os_entropy_noise();
    const double sigma = 0.53;
    GtdActorCriticLearner l(p, f, 1, true, false, sigma, noise.get());
    std::vector<int> support(200);
    for (int i = 0; i < 200; ++i) support[static_cast<std::size_t>(i)] = i;
    std::vector<double> x(200);
    double z2 = 0;  // sum of (noise / (sigma C))^2
    std::size_t m = 0;
    dprl::Rng rng(8);
    for (int r = 0; r < 2000; ++r) {
      // 101 entries a and 99 zeros: the median |x_i| is a, so C = a, a new scale every release
      const double a = std::ldexp(1.0 + rng.uniform(), static_cast<int>(rng.uniform() * 20) - 10);
      x.assign(200, 0.0);
      for (int i = 0; i < 101; ++i) x[static_cast<std::size_t>(i)] = a;
      const double c = l.privatise(x, support);
      REQUIRE(c == a);
      // the 99 zeros hold the noise alone
      for (int i = 101; i < 200; ++i) {
        const double e = x[static_cast<std::size_t>(i)] / (sigma * c);
        z2 += e * e;
        ++m;
      }
    }
    const double var = z2 / double(m), tol = 4.89 * std::sqrt(2.0 / double(m));
    const double widest = (1.0 + 0x1p-12) * (1.0 + 0x1p-7);
    CHECK(var > 1.0 - tol);
    CHECK(var < widest * widest + tol);
  }
}

TEST_SUITE("e2e") {
  TEST_CASE("DP-Both: the whole-run epsilon is that of sensitivity 2C (exact GDP), not C") {
    const auto dir = ac_temp_dir("dprl_ac_test");
    fs::remove_all(dir);
    const std::string yaml =
        "seed: 3\nenv: {id: chain_mdp, params: {n: 10}}\n"
        "algo: {id: actor_critic, params: {dp: both, epsilon: 2, episodes: 20, noise: seeded, "
        "trace_similarity: true}}\ntrain: {steps: 1000000, eval_every: 0, eval_episodes: 5}\n";
    const auto s = dprl::algos::run_experiment(dprl::parse_yaml(yaml, "t"), "t", ac_quiet(dir / "a"));
    dprl::algos::run_experiment(dprl::parse_yaml(yaml, "t"), "t", ac_quiet(dir / "b"));
    // seeded noise is reproducible
    CHECK(dprl::read_file(dir / "a" / "metrics.csv") == dprl::read_file(dir / "b" / "metrics.csv"));
    REQUIRE(s.privacy.has_value());
    const auto d = nlohmann::json::parse(s.privacy->details_json);
    const double sigma = std::sqrt(2 * std::log(1.25 / 1e-6)) / 2;
    CHECK(d["sigma"].get<double>() == doctest::Approx(sigma).epsilon(1e-14));
    const auto releases = d["releases"].get<std::int64_t>();
    CHECK(releases == 2 * s.env_steps);  // actor and critic every step
    // each release: a vector of norm exactly C, replaced by another of norm C (sensitivity 2C),
    // plus N(0, sigma^2 C^2): noise multiplier sigma / 2. T of them compose to mu-GDP with
    // mu = sqrt(T) 2 / sigma; the reported RDP epsilon must be a valid bound on the exact one
    // (>=) and close to it (RDP's conversion slack is 2% here, mu = 33; with sensitivity C the
    // old figure was about a quarter of the exact one)
    const double exact = gdp_epsilon(std::sqrt(static_cast<double>(releases)) * 2 / sigma, 1e-6);
    CHECK(s.privacy->epsilon >= exact);
    CHECK(s.privacy->epsilon <= 1.1 * exact);
    // the per-update exact epsilon of noise multiplier sigma / 2 at delta 1e-6
    CHECK(d["per_update_epsilon_exact"].get<double>() ==
          doctest::Approx(gdp_epsilon(2 / sigma, 1e-6)).epsilon(1e-6));
    // the record: replace-one trajectory, only the noised vectors covered, never formal
    CHECK_FALSE(s.privacy->formal);
    CHECK(s.privacy->neighbouring == dprl::NeighbouringRelation::kReplaceOne);
    CHECK(s.privacy->unit == "trajectory");
    CHECK(s.privacy->reproducible_noise);
    CHECK(s.privacy->covers.size() == 2);
    CHECK(d["classical_calibration_valid"] == false);
    // 20 episode rows with cosine similarities in [-1, 1]
    const std::string csv = dprl::read_file(dir / "a" / "metrics.csv");
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 21);
    bool found = false;
    for (const auto& [k, v] : s.extra)
      if (k == "cos_u_mean") {
        found = true;
        CHECK(v >= -1.0);
        CHECK(v <= 1.0);
      }
    CHECK(found);
  }

  TEST_CASE("fixed clipping is not formal either: the record says what is covered") {
    const auto dir = ac_temp_dir("dprl_ac_test_fixed");
    fs::remove_all(dir);
    const std::string yaml =
        "seed: 1\nenv: {id: taxi}\n"
        "algo: {id: actor_critic, params: {dp: actor, clip: fixed, clip_norm: 1, episodes: 3}}\n"
        "train: {steps: 1000000, eval_every: 0, eval_episodes: 3}\n";
    const auto s = dprl::algos::run_experiment(dprl::parse_yaml(yaml, "t"), "t", ac_quiet(dir));
    REQUIRE(s.privacy.has_value());
    CHECK_FALSE(s.privacy->formal);
    CHECK(s.privacy->covers ==
          std::vector<std::string>{"the noised actor gradients (not written)"});
    // secure by default: OS entropy, exact discrete samples on snapped vectors
    CHECK(s.privacy->noise_source == "os_entropy(secure, chacha20)");
    CHECK_FALSE(s.privacy->reproducible_noise);
    const auto d = nlohmann::json::parse(s.privacy->details_json);
    CHECK(d["critic_releases"] == 0);
    CHECK(d["actor_releases"].get<std::int64_t>() == s.env_steps);
    // snapping the 3000-element actor vector to the sampler's grid g widens the sensitivity to
    // 2C + sqrt(3000) g, and the release widens the noise to sigma C (1 + sqrt(3000) g / 2C)
    // (privacy/secure_release.hpp): the noise multiplier stays the paper's sigma / 2
    const double sigma = std::sqrt(2 * std::log(1.25 / 1e-6)) / 10;
    CHECK(d["noise_multiplier_actor"].get<double>() == sigma / 2);
    CHECK(s.privacy->sensitivity.find("2C + sqrt(n) g") != std::string::npos);
    // every release on the table sampler: its distance counted per release, delta at most 1
    const double tv = double(s.env_steps) * 3000 * dprl::privacy::kTableTvPerValue;
    CHECK(s.privacy->sampler_delta ==
          doctest::Approx(dprl::privacy::sampler_delta(s.privacy->epsilon, tv)));
    CHECK(s.privacy->sampler_delta > 0);
    CHECK(s.privacy->delta == dprl::privacy::record_delta(1e-6, s.privacy->sampler_delta));
    CHECK(s.privacy->delta <= 1.0);
    auto summary = nlohmann::json::parse(dprl::read_file(dir / "summary.json"));
    CHECK(summary["privacy"]["formal"] == false);
    CHECK(summary["privacy"]["neighbouring"] == "replace");
  }

  TEST_CASE("secure noise whose grid the exact sampler cannot cover is refused before training") {
    // epsilon 1e-7: sigma = 5.3e7, and sqrt(3000) sigma / 2 = 1.5e9 grid steps per noise scale
    // exceed the discrete Gaussian's 2^28; seeded noise (no grid) runs
    auto run_with = [](const std::string& noise) {
      const auto dir = ac_temp_dir("dprl_ac_test_grid");
      fs::remove_all(dir);
      return dprl::algos::run_experiment(
          dprl::parse_yaml("seed: 1\nenv: {id: taxi}\ntrain: {steps: 50, eval_episodes: 1}\n"
                           "algo: {id: actor_critic, params: {dp: actor, epsilon: 1.0e-7, "
                           "episodes: 1, noise: " +
                               noise + "}}\n",
                           "t"),
          "t", ac_quiet(dir));
    };
    CHECK_THROWS_WITH_AS(run_with("os-entropy"), doctest::Contains("actor_critic: epsilon = 1e-07"),
                         dprl::ParamError);
    CHECK_NOTHROW(run_with("seeded"));
  }

  TEST_CASE("metrics.csv's epsilon column uses the configured accountant") {
    const auto dir = ac_temp_dir("dprl_ac_test_pld");
    fs::remove_all(dir);
    const std::string yaml =
        "seed: 2\nenv: {id: chain_mdp, params: {n: 5}}\n"
        "algo: {id: actor_critic, params: {dp: actor, clip: fixed, epsilon: 0.5, episodes: 6, "
        "accountant: pld, noise: seeded}}\n"
        "train: {steps: 1000000, eval_every: 0, eval_episodes: 3}\n";
    const auto s = dprl::algos::run_experiment(dprl::parse_yaml(yaml, "t"), "t", ac_quiet(dir));
    REQUIRE(s.privacy.has_value());
    CHECK(s.privacy->accountant == "pld");
    const std::string csv = dprl::read_file(dir / "metrics.csv");
    // the last row's epsilon (5th column) is the summary's PLD figure, not RDP's
    std::string last = csv.substr(csv.rfind('\n', csv.size() - 2) + 1);
    std::vector<std::string> cells;
    for (std::size_t p = 0, q; p <= last.size(); p = q + 1) {
      q = last.find_first_of(",\n", p);
      if (q == std::string::npos) q = last.size();
      cells.push_back(last.substr(p, q - p));
    }
    REQUIRE(cells.size() >= 5);
    const double col = std::stod(cells[4]);
    CHECK(col == doctest::Approx(s.privacy->epsilon).epsilon(1e-6));
    const auto d = nlohmann::json::parse(s.privacy->details_json);
    auto rdp = dprl::privacy::make_accountant("rdp");
    rdp->compose(dprl::privacy::DpEvent::gaussian(d["noise_multiplier_actor"].get<double>()),
                 d["releases"].get<std::int64_t>());
    CHECK(std::fabs(col - rdp->epsilon(1e-6)) > 1e-3 * col);
  }

  TEST_CASE("bad actor-critic parameters are rejected with the rule") {
    auto run = [](const std::string& params) {
      dprl::algos::RunOptions o;
      o.write = false;
      o.progress = dprl::Progress::Mode::kOff;
      dprl::algos::run_experiment(
          dprl::parse_yaml(
              "seed: 1\nenv: {id: taxi}\nalgo: {id: actor_critic, params: {" + params + "}}\n",
              "bad.yaml"),
          "bad", o);
    };
    CHECK_THROWS_WITH_AS(run("alpha_u: -0.1"),
                         doctest::Contains("actor_critic.alpha_u = -0.1: must be in (0, inf)"),
                         dprl::ParamError);
    CHECK_THROWS_WITH_AS(run("lambda: 1.5"),
                         doctest::Contains("actor_critic.lambda = 1.5: must be in [0, 1]"),
                         dprl::ParamError);
    CHECK_THROWS_WITH_AS(run("epsilon: 0"),
                         doctest::Contains("actor_critic.epsilon = 0: must be in (0, inf)"),
                         dprl::ParamError);
    CHECK_THROWS_WITH_AS(run("delta: 1"),
                         doctest::Contains("actor_critic.delta = 1: must be in (0, 1)"),
                         dprl::ParamError);
    CHECK_THROWS_WITH_AS(run("dp: all"),
                         doctest::Contains("must be one of none, actor, critic, both"),
                         dprl::ParamError);
    CHECK_THROWS_WITH_AS(
        dprl::algos::run_experiment(
            dprl::parse_yaml("seed: 1\nenv: {id: cartpole}\nalgo: {id: actor_critic}\n", "b"), "b",
            [] {
              dprl::algos::RunOptions o;
              o.write = false;
              return o;
            }()),
        doctest::Contains("one_hot needs discrete observations"), dprl::ParamError);
  }
}

TEST_SUITE("e2e") {
  TEST_CASE(
      "a budget is charged before release in a persistent ledger, and a rerun cannot respend") {
    const auto dir = ac_temp_dir("dprl_ac_test_budget");
    fs::remove_all(dir);
    const std::string yaml =
        "seed: 2\nenv: {id: chain_mdp, params: {n: 30}}\n"
        "algo: {id: actor_critic, params: {dp: actor, clip: fixed, epsilon: 1, budget_epsilon: "
        "150, episodes: 1000, charge_block: 100, noise: seeded}}\n"
        "train: {steps: 10000000, eval_every: 0, eval_episodes: 3}\n";
    const auto s = dprl::algos::run_experiment(dprl::parse_yaml(yaml, "t"), "t", ac_quiet(dir));
    REQUIRE(s.privacy.has_value());
    CHECK(s.privacy->epsilon <= 150.0);
    auto d = nlohmann::json::parse(s.privacy->details_json);
    CHECK(d["stopped_by_budget"] == true);
    CHECK(s.episodes < 1000);
    // every release was paid for: the ledger charged at least the releases made
    const auto releases = d["releases"].get<std::int64_t>();
    CHECK(d["charged_steps"].get<std::int64_t>() == releases);  // stopped exactly at the budget
    CHECK(d["charged_steps_unused"] == 0);
    // one more release would have crossed the budget (the ledger's own accountant)
    auto acc = dprl::privacy::make_accountant("rdp");
    acc->compose(dprl::privacy::DpEvent::gaussian(d["noise_multiplier_actor"].get<double>()),
                 releases + 1);
    CHECK(acc->epsilon(1e-6) > 150.0);
    const fs::path file = dir / "privacy_ledger.json";
    const std::string before = dprl::read_file(file);
    auto ledger = nlohmann::json::parse(before);
    CHECK(ledger["guarantee"]["epsilon"].get<double>() ==
          doctest::Approx(s.privacy->epsilon).epsilon(1e-12));
    CHECK(ledger["guarantee"]["neighbouring"] == "replace");
    CHECK(ledger["budget"]["epsilon"] == 150.0);
    CHECK(ledger["charges"].size() == d["ledger_charges_this_run"].get<std::size_t>());
    CHECK(ledger["checksum"].get<std::string>().rfind("fnv1a64:", 0) == 0);
    // a rerun into the same directory finds the budget spent and is refused before it writes
    fs::remove(dir / "config.yaml");
    CHECK_THROWS_WITH_AS(
        dprl::algos::run_experiment(dprl::parse_yaml(yaml, "t"), "t", ac_quiet(dir)),
        doctest::Contains(doctest::String(
            ("the privacy budget in " + file.string() + " is already spent").c_str())),
        dprl::BudgetExceeded);
    CHECK(dprl::read_file(file) == before);
    CHECK_FALSE(fs::exists(dir / "config.yaml"));
    // a budget too small for one step is refused before anything is written
    const auto tiny = dir.string() + "_tiny";
    fs::remove_all(tiny);
    std::string small = yaml;
    small.replace(small.find("budget_epsilon: 150"), 19, "budget_epsilon: 0.001");
    CHECK_THROWS_WITH_AS(
        dprl::algos::run_experiment(dprl::parse_yaml(small, "t"), "t", ac_quiet(tiny)),
        doctest::Contains("cannot afford a single step"), dprl::BudgetExceeded);
    CHECK_FALSE(fs::exists(tiny));
  }

  TEST_CASE("runs sharing a ledger file share one budget") {
    const auto dir = ac_temp_dir("dprl_ac_test_shared");
    fs::remove_all(dir);
    const fs::path file = dir / "shared" / "budget.json";
    auto yaml = [&](int episodes) {
      return "seed: 4\nenv: {id: chain_mdp, params: {n: 10}}\n"
             "algo: {id: actor_critic, params: {dp: actor, clip: fixed, epsilon: 1, "
             "budget_epsilon: 300, noise: seeded, charge_block: 50, ledger: " +
             file.string() + ", episodes: " + std::to_string(episodes) +
             "}}\ntrain: {steps: 10000000, eval_every: 0, eval_episodes: 3}\n";
    };
    const auto a =
        dprl::algos::run_experiment(dprl::parse_yaml(yaml(1), "t"), "t", ac_quiet(dir / "a"));
    const double after_a = dprl::privacy::Ledger::load_file(file).spent_epsilon();
    CHECK(after_a > 0);
    CHECK_FALSE(fs::exists(dir / "a" / "privacy_ledger.json"));
    const auto b =
        dprl::algos::run_experiment(dprl::parse_yaml(yaml(1000), "t"), "t", ac_quiet(dir / "b"));
    const auto l = dprl::privacy::Ledger::load_file(file);
    CHECK(l.spent_epsilon() <= 300.0);
    CHECK(l.spent_epsilon() > after_a);
    // b stopped early: it could spend only what a left
    auto db = nlohmann::json::parse(b.privacy->details_json);
    CHECK(db["stopped_by_budget"] == true);
    CHECK(b.privacy->epsilon < l.spent_epsilon());
  }
}

TEST_SUITE("e2e") {
  TEST_CASE("noise that blows the weights up stops training and is reported as divergence") {
    const auto dir = ac_temp_dir("dprl_ac_test_diverge");
    fs::remove_all(dir);
    const std::string yaml =
        "seed: 1\nenv: {id: taxi}\n"
        "algo: {id: actor_critic, params: {alpha_v: 0.05, alpha_w: 0.05, lambda: 0, dp: critic, "
        "epsilon: 0.1, episodes: 500, noise: seeded}}\ntrain: {steps: 10000000, eval_every: 0, "
        "eval_episodes: "
        "3}\n";
    const auto s = dprl::algos::run_experiment(dprl::parse_yaml(yaml, "t"), "t", ac_quiet(dir));
    double diverged = 0, at = -1;
    for (const auto& [k, v] : s.extra) {
      if (k == "diverged") diverged = v;
      if (k == "diverged_episode") at = v;
    }
    CHECK(diverged == 1.0);
    CHECK(at >= 0);
    CHECK(s.episodes == static_cast<std::int64_t>(at) + 1);
  }
}

TEST_SUITE("golden") {
  // the sparse bookkeeping of GtdActorCriticLearner gives the dense loops' results bit for bit
  TEST_CASE("the sparse trace loops equal the dense loops bit for bit") {
    for (double lambda : {0.0, 0.4, 0.99}) {
      for (bool dp : {false, true}) {
        ActorCriticParams p;
        p.lambda = lambda;
        p.alpha_v = 0.1;
        p.alpha_w = 0.5;
        p.alpha_u = 0.5;
        OneHotFeatures f(100, 2);
        auto n1 = dprl::privacy::make_seeded_noise(3), n2 = dprl::privacy::make_seeded_noise(3);
        const double sigma = dp ? 0.5 : 0.0;
        GtdActorCriticLearner fast(p, f, 2, dp, false, sigma, dp ? n1.get() : nullptr);
        GtdActorCriticLearner dense(p, f, 2, dp, false, sigma, dp ? n2.get() : nullptr);
        dense.sparse = false;  // the dense loops for good
        dprl::Rng rng(17), r1(18), r2(18);
        float s = 0;
        for (int step = 0; step < 20000; ++step) {
          if (step % 700 == 0) {
            fast.begin_episode();
            dense.begin_episode();
            s = 0;
          }
          const auto [a1, rho1] = fast.act(obs_of(s), r1);
          const auto [a2, rho2] = dense.act(obs_of(s), r2);
          REQUIRE(a1 == a2);
          REQUIRE(rho1 == rho2);
          const float s2 = a1 == 1 && rng.uniform() < 0.9 ? std::min(s + 1.0f, 99.0f) : s;
          const bool term = s2 == 99.0f;
          fast.update(obs_of(s), a1, rho1, term ? 1.0 : -1.0, term, obs_of(s2));
          dense.update(obs_of(s), a2, rho2, term ? 1.0 : -1.0, term, obs_of(s2));
          s = term ? 0.0f : s2;
        }
        CHECK(fast.sparse);
        CHECK(fast.v == dense.v);
        CHECK(fast.w == dense.w);
        CHECK(fast.u == dense.u);
        CHECK(fast.ev == dense.ev);
        CHECK(fast.eu == dense.eu);
      }
    }
  }
}
