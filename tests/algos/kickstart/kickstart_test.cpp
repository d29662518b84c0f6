// Kickstarting (paper 003): the eta floor, the k schedule and floor switch, the imitation term's
// gradient, the Lipschitz certificate, the accounting records, bad input, and that a student whose
// threshold exceeds every possible distance is plain PPO bit for bit.
#include <doctest/doctest.h>
#include <unistd.h>

#include <Eigen/SVD>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algos/kickstart/kickstart_loss.hpp"
#include "algos/kickstart/kickstart_ppo.hpp"
#include "algos/kickstart/kickstart_teacher.hpp"
#include "algos/run/experiment.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/nn/nn_lipschitz.hpp"
#include "engine/rng.hpp"
#include "envs/register_envs.hpp"
#include "privacy/dirichlet_teacher.hpp"

namespace fs = std::filesystem;
using dprl::privacy::DirichletTeacher;
using dprl::privacy::DirichletTeacherParams;

namespace {

fs::path ks_dir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("dprl_kickstart_test_" + name);
  fs::remove_all(d);
  return d;
}

dprl::algos::RunOptions ks_quiet(fs::path out) {
  dprl::algos::RunOptions o;
  o.out = out;
  o.progress = dprl::Progress::Mode::kOff;
  return o;
}

// A CartPole teacher trained once per test process (CleanRL PPO, 4096 steps: a weak but real
// policy), in a folder of its own process: ctest runs the cases of this file in parallel processes.
const fs::path& teacher_file() {
  static const fs::path f = [] {
    const fs::path d = ks_dir("teacher_" + std::to_string(::getpid()));
    dprl::algos::TrainContext ctx([] { return dprl::envs::make_env("cartpole"); }, 11,
                                  dprl::algos::TrainParams{}, nullptr, nullptr);
    dprl::algos::train_teacher(d / "teacher.bin", ctx, 64, 4096);
    return d / "teacher.bin";
  }();
  return f;
}

dprl::Node config(const std::string& algo, const std::string& params, int steps) {
  return dprl::parse_yaml("seed: 5\nenv: {id: cartpole}\nalgo: {id: " + algo + ", params: {" +
                              params + "}}\ntrain: {steps: " + std::to_string(steps) +
                              ", eval_every: 2048, eval_episodes: 3}\n",
                          "inline");
}

std::string teacher_param() { return "teacher: '" + teacher_file().string() + "'"; }

// log(Gamma) part and the whole of eq. 12, written out here independently of the library.
double eq12(double k, double eta, double tau, int m, double lf, double b) {
  return std::sqrt(m) * lf * b * k * std::log(1 / tau) + (m - 1) * std::lgamma(k * eta) +
         std::lgamma(k * (1 - (m - 1) * eta)) - m * std::lgamma(k / m);
}

// eq. 6 for m = 2 by Simpson integration of the Beta(k eta, k (1 - eta)) density over
// [tau, 1 - tau] (the density is smooth there; 20000 panels give ~1e-10 accuracy here).
double eq6_m2(double k, double eta, double tau) {
  const double a = k * eta, b = k * (1 - eta);
  const double lb = std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b);
  auto f = [&](double x) {
    return std::exp((a - 1) * std::log(x) + (b - 1) * std::log1p(-x) - lb);
  };
  const int n = 20000;
  const double h = (1 - 2 * tau) / n;
  double s = f(tau) + f(1 - tau);
  for (int i = 1; i < n; ++i) s += f(tau + i * h) * (i % 2 ? 4 : 2);
  return 1 - s * h / 3;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("the eta floor lands in the restricted simplex and scales distances by 1 - m eta") {
    const std::vector<double> p{0.97, 0.01, 0.02, 0.0}, q{0.1, 0.2, 0.3, 0.4};
    std::vector<double> fp(4), fq(4);
    const double eta = 0.1;
    dprl::privacy::eta_floor(p, eta, fp);
    dprl::privacy::eta_floor(q, eta, fq);
    double sum = 0, dist_in = 0, dist_out = 0;
    for (int i = 0; i < 4; ++i) {
      CHECK(fp[i] >= eta - 1e-15);
      sum += fp[i];
      dist_in += (p[i] - q[i]) * (p[i] - q[i]);
      dist_out += (fp[i] - fq[i]) * (fp[i] - fq[i]);
    }
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-15));
    CHECK(std::sqrt(dist_out) == doctest::Approx((1 - 4 * eta) * std::sqrt(dist_in)));
    CHECK(fp[3] == doctest::Approx(eta));  // a zero entry is lifted to exactly eta
  }

  TEST_CASE("k follows k0 c^j and switches to input-independent answers below k_floor") {
    DirichletTeacherParams p;
    p.k0 = 5;
    p.decay = 0.3;
    p.k_floor = 0.1;  // 5, 1.5, 0.45, 0.135, then 0.0405 < 0.1
    p.eta = 0.1;
    p.tau = 0.01;
    auto mc = dprl::privacy::make_seeded_noise(1, 9, 9);
    DirichletTeacher t(p, *mc);
    auto noise = dprl::privacy::make_seeded_noise(1, 1, 1);
    const std::vector<double> pi{0.8, 0.2};
    std::vector<double> out(2);
    double k = 5;
    for (int j = 0; j < 4; ++j) {
      CHECK(t.current_k() == doctest::Approx(k).epsilon(1e-15));
      const auto a = t.answer(pi, out, *noise);
      CHECK(a.private_);
      CHECK(a.k == doctest::Approx(k).epsilon(1e-15));
      t.advance();
      k *= 0.3;
    }
    CHECK(t.current_k() == 0.0);
    const double eps = t.epsilon_total(), delta = t.delta_total();
    // below the floor: k = 0, nothing charged, and the answer does not depend on the policy
    auto n1 = dprl::privacy::make_seeded_noise(2, 0, 0),
         n2 = dprl::privacy::make_seeded_noise(2, 0, 0);
    std::vector<double> o1(2), o2(2);
    const auto a1 = t.answer(pi, o1, *n1);
    const auto a2 = t.answer(std::vector<double>{0.0, 1.0}, o2, *n2);
    CHECK(a1.k == 0.0);
    CHECK(a2.k == 0.0);
    CHECK_FALSE(a1.private_);
    CHECK(o1 == o2);
    CHECK((o1[0] == 1.0 || o1[1] == 1.0));  // one_hot
    CHECK(t.epsilon_total() == eps);
    CHECK(t.delta_total() == delta);
    CHECK(t.switched_at_query() == 4);
    CHECK(t.private_queries() == 4);
    CHECK(t.queries() == 6);
    CHECK(t.used_costs().size() == 4);
  }

  TEST_CASE("per-query costs match eqs. 12 and 6 computed independently, with totals and vacuous") {
    DirichletTeacherParams p;
    p.k0 = 5;
    p.eta = 0.05;
    p.tau = 0.001;
    p.adjacency = 0.02;
    p.lipschitz = 3.0;
    auto mc = dprl::privacy::make_seeded_noise(1, 9, 9);
    DirichletTeacher t(p, *mc);
    auto noise = dprl::privacy::make_seeded_noise(3, 0, 0);
    const double lf = (1 - 2 * 0.05) * 3.0;
    const double e0 = eq12(5, 0.05, 0.001, 2, lf, 0.02), d0 = eq6_m2(5, 0.05, 0.001);
    std::vector<double> out(2);
    int n = 0;
    while (t.delta_total() < 1.0) {
      CHECK_FALSE(t.vacuous());
      t.answer(std::vector<double>{0.5, 0.5}, out, *noise);
      ++n;
    }
    CHECK(t.vacuous());
    CHECK(n == static_cast<int>(std::ceil(1.0 / d0)));
    const auto c = t.used_costs();
    REQUIRE(c.size() == 1);
    CHECK(c[0].queries == n);
    CHECK(c[0].delta_exact);
    CHECK(c[0].epsilon == doctest::Approx(e0).epsilon(1e-12));
    CHECK(c[0].delta == doctest::Approx(d0).epsilon(1e-7));
    CHECK(t.epsilon_total() == doctest::Approx(n * e0).epsilon(1e-12));
    CHECK(t.delta_total() == doctest::Approx(n * c[0].delta).epsilon(1e-14));
  }

  TEST_CASE("a budget switches the teacher off before the charge that would exceed it") {
    DirichletTeacherParams p;
    p.eta = 0.05;
    p.tau = 0.001;
    const double d0 = eq6_m2(5, 0.05, 0.001);  // about 0.28
    p.budget_delta = 2.5 * d0;                 // two answers fit, the third does not
    auto mc = dprl::privacy::make_seeded_noise(1, 9, 9);
    DirichletTeacher t(p, *mc);
    auto noise = dprl::privacy::make_seeded_noise(3, 0, 0);
    std::vector<double> out(2);
    for (int i = 0; i < 5; ++i) t.answer(std::vector<double>{0.3, 0.7}, out, *noise);
    CHECK(t.private_queries() == 2);
    CHECK(t.budget_exhausted());
    CHECK(t.switched_at_query() == 2);
    CHECK(t.delta_total() <= p.budget_delta);
  }

  TEST_CASE("m > 2: the Monte Carlo delta is an upper end above the estimate") {
    DirichletTeacherParams p;
    p.actions = 4;
    p.eta = 0.15;
    p.tau = 0.001;
    p.delta_samples = 20000;
    auto mc = dprl::privacy::make_seeded_noise(1, 9, 9);
    const auto c = dprl::privacy::dirichlet_query_cost(p, 5.0, *mc);
    CHECK_FALSE(c.delta_exact);
    // Hoeffding half width at N = 20000, beta = 1e-6: sqrt(ln(2e6) / 40000)
    CHECK(c.delta - c.delta_estimate == doctest::Approx(std::sqrt(std::log(2e6) / 40000)));
  }

  TEST_CASE("phi's gradient matches central finite differences of ||softmax(z) - q||") {
    dprl::Rng rng(42);
    for (int m : {2, 3, 6}) {
      for (int trial = 0; trial < 20; ++trial) {
        std::vector<double> z(m), q(m);
        double qs = 0;
        for (int i = 0; i < m; ++i) {
          z[i] = 3 * (rng.uniform() - 0.5);
          q[i] = rng.uniform() + 1e-3;
          qs += q[i];
        }
        for (auto& v : q) v /= qs;
        auto phi = [&](const std::vector<double>& zz) {
          double mx = zz[0], s = 0, d = 0;
          for (double v : zz) mx = std::max(mx, v);
          for (double v : zz) s += std::exp(v - mx);
          for (int i = 0; i < m; ++i) d += std::pow(std::exp(zz[i] - mx) / s - q[i], 2);
          return std::sqrt(d);
        };
        double mx = z[0], s = 0;
        for (double v : z) mx = std::max(mx, v);
        for (double v : z) s += std::exp(v - mx);
        std::vector<float> logp(m), qf(m), dz(m, 0.0f);
        for (int i = 0; i < m; ++i) {
          logp[i] = static_cast<float>(z[i] - mx - std::log(s));
          qf[i] = static_cast<float>(q[i]);
        }
        const auto v = dprl::algos::kickstart_phi(logp.data(), qf.data(), m, 0.0, 1.0, dz.data());
        REQUIRE(v.active);
        CHECK(v.phi == doctest::Approx(phi(z)).epsilon(1e-6));
        for (int i = 0; i < m; ++i) {
          const double h = 1e-5;
          auto zp = z, zm = z;
          zp[i] += h;
          zm[i] -= h;
          // FD error O(h^2) ~ 1e-10; float inputs and output carry ~1e-7 relative error
          CHECK(dz[i] == doctest::Approx((phi(zp) - phi(zm)) / (2 * h)).epsilon(1e-4).scale(1e-3));
        }
        // below the threshold the term and its gradient vanish
        std::vector<float> dz2(m, 0.0f);
        const auto off =
            dprl::algos::kickstart_phi(logp.data(), qf.data(), m, phi(z) + 1e-3, 1.0, dz2.data());
        CHECK_FALSE(off.active);
        CHECK(off.phi == 0.0);
        for (float g : dz2) CHECK(g == 0.0f);
      }
    }
  }

  TEST_CASE("alpha follows eq. 15 and is 0 for the exact teacher") {
    CHECK(dprl::algos::kickstart_alpha(0.5, 0.05, 5) ==
          doctest::Approx(0.5 * std::sqrt(std::log(20.0) / 12)));
    CHECK(dprl::algos::kickstart_alpha(0.5, 0.05, INFINITY) == 0.0);
    CHECK(dprl::algos::kickstart_alpha(0.0, 0.05, 5) == 0.0);
  }

  TEST_CASE("spectral norm: estimate <= exact <= certified upper, within 1 percent") {
    dprl::Rng rng(7);
    for (auto [r, c] : {std::pair{64, 4}, std::pair{64, 64}, std::pair{2, 64}, std::pair{5, 3}}) {
      dprl::nn::Mat w(r, c);
      for (int i = 0; i < r; ++i)
        for (int j = 0; j < c; ++j) w(i, j) = static_cast<float>(rng.normal());
      const double exact = Eigen::JacobiSVD<Eigen::MatrixXd>(w.cast<double>()).singularValues()[0];
      const auto s = dprl::nn::spectral_norm(w.data(), r, c);
      CHECK(s.estimate <= exact * (1 + 1e-12));
      CHECK(s.upper >= exact);
      CHECK(s.upper <= exact * 1.01);
    }
  }

  TEST_CASE("the teacher's certified L bounds observed ||pi(x) - pi(y)|| / ||x - y||") {
    auto t = dprl::algos::TeacherPolicy::load(teacher_file(), "teacher");
    CHECK(t.lipschitz().upper >= t.lipschitz().estimate);
    dprl::Rng rng(3);
    Eigen::MatrixXd px, py;
    double worst = 0;
    for (int i = 0; i < 2000; ++i) {
      std::vector<float> x(4), y(4);
      double d2 = 0;
      for (int j = 0; j < 4; ++j) {
        x[j] = static_cast<float>(2 * rng.normal());
        y[j] = x[j] + static_cast<float>(0.05 * rng.normal());
        d2 += (double{x[j]} - y[j]) * (double{x[j]} - y[j]);
      }
      t.probabilities(x, 1, px);
      t.probabilities(y, 1, py);
      worst = std::max(worst, (px - py).norm() / std::sqrt(d2));
    }
    CHECK(worst > 0);
    CHECK(worst <= t.lipschitz().upper);
  }

  TEST_CASE("bad input names its key and fails before the run directory exists") {
    const auto out = ks_dir("bad");
    const std::string tp = teacher_param();
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"k0: 0", "k0"},          {"decay: 0", "decay"},
        {"decay: 1.5", "decay"},  {"eta: 0.5", "eta"},
        {"eta: -0.1", "eta"},     {"tau: 0", "tau"},
        {"tau: 0.2", "tau"},      {"adjacency: 0", "adjacency"},
        {"lambda: -1", "lambda"}, {"teacher: '/nonexistent/t.bin'", "teacher"}};
    for (const auto& [bad, key] : cases) {
      CAPTURE(bad);
      const std::string params = bad.rfind("teacher", 0) == 0 ? bad : tp + ", " + bad;
      try {
        dprl::algos::run_experiment(config("ppo_kickstart", params, 512), "t", ks_quiet(out));
        FAIL("no error");
      } catch (const dprl::ParamError& e) {
        CHECK(std::string(e.what()).find(key) != std::string::npos);
      }
      CHECK_FALSE(fs::exists(out));
    }
    // eta in [0, 0.5) passes the range check but must also be below 1/m = 0.25 on LunarLander
    auto lunar =
        dprl::parse_yaml("seed: 1\nenv: {id: lunar_lander}\nalgo: {id: ppo_kickstart, params: {" +
                             tp + ", eta: 0.3, tau: 0.01}}\ntrain: {steps: 512}\n",
                         "inline");
    try {
      dprl::algos::run_experiment(lunar, "t", ks_quiet(out));
      FAIL("no error");
    } catch (const dprl::ParamError& e) {
      CHECK(std::string(e.what()).find("ppo_kickstart.eta") != std::string::npos);
    }
    CHECK_FALSE(fs::exists(out));
    // a CartPole teacher for Acrobot (6 observations, 3 actions)
    auto acro =
        dprl::parse_yaml("seed: 1\nenv: {id: acrobot}\nalgo: {id: ppo_kickstart, params: {" + tp +
                             "}}\ntrain: {steps: 512}\n",
                         "inline");
    CHECK_THROWS_AS(dprl::algos::run_experiment(acro, "t", ks_quiet(out)), dprl::ParamError);
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_SUITE("golden") {
  TEST_CASE("a student whose threshold exceeds sqrt(2) is plain ppo bit for bit (cleanrl)") {
    // alpha >= 10 sqrt(log(20) / (2 (5 + 1))) = 5 > sqrt(2) >= ||p - q|| for any two policies,
    // so phi never fires, whatever the (OS-entropy) answers are
    const auto a = ks_dir("base"), b = ks_dir("aware"), c = ks_dir("unaware");
    dprl::algos::run_experiment(config("ppo", "", 4096), "t", ks_quiet(a));
    dprl::algos::run_experiment(
        config("ppo_kickstart", teacher_param() + ", lambda: 10, decay: 0.9", 4096), "t",
        ks_quiet(b));
    CHECK(dprl::read_file(a / "policy.bin") == dprl::read_file(b / "policy.bin"));
    // the same student with lambda = 0 follows the answers: the test above is not vacuous
    dprl::algos::run_experiment(
        config("ppo_kickstart", teacher_param() + ", lambda: 0, decay: 0.9", 4096), "t",
        ks_quiet(c));
    CHECK(dprl::read_file(a / "policy.bin") != dprl::read_file(c / "policy.bin"));
  }

  TEST_CASE("spinning up style: a huge threshold equals teacher_mode off bit for bit") {
    const auto a = ks_dir("su_off"), b = ks_dir("su_aware");
    dprl::algos::run_experiment(config("ppo_kickstart_spinup", "teacher_mode: off", 3000), "t",
                                ks_quiet(a));
    dprl::algos::run_experiment(
        config("ppo_kickstart_spinup", teacher_param() + ", lambda: 10", 3000), "t", ks_quiet(b));
    CHECK(dprl::read_file(a / "policy.bin") == dprl::read_file(b / "policy.bin"));
  }
}

TEST_SUITE("unit") {
  TEST_CASE("the run's guarantee record: relation, unit, one query per step, vacuous totals") {
    const auto d = ks_dir("record");
    const auto s = dprl::algos::run_experiment(
        config("ppo_kickstart_spinup", teacher_param() + ", decay: 0.8, noise: seeded", 2000), "t",
        ks_quiet(d));
    REQUIRE(s.privacy);
    CHECK(s.privacy->unit == "query");
    CHECK(s.privacy->neighbouring == dprl::NeighbouringRelation::kReplaceOne);
    CHECK_FALSE(s.privacy->formal);
    CHECK(s.privacy->reproducible_noise);
    const auto j = nlohmann::json::parse(dprl::read_file(d / "summary.json"));
    const auto& det = j["privacy"]["details"];
    // no extra queries in the 80 update iterations: one per env step
    CHECK(det["queries"].get<std::int64_t>() == s.env_steps);
    std::int64_t per_k = 0;
    double eps = 0, delta = 0;
    for (const auto& q : det["per_query"]) {
      per_k += q["queries"].get<std::int64_t>();
      eps += q["epsilon"].get<double>() * q["queries"].get<double>();
      delta += q["delta"].get<double>() * q["queries"].get<double>();
    }
    CHECK(per_k == det["private_queries"].get<std::int64_t>());
    CHECK(per_k + det["input_independent_queries"].get<std::int64_t>() == s.env_steps);
    CHECK(det["totals"]["epsilon"].get<double>() == doctest::Approx(eps));
    CHECK(det["totals"]["delta_sum"].get<double>() == doctest::Approx(delta));
    CHECK(det["totals"]["vacuous"].get<bool>() == (delta >= 1.0));
    CHECK(det["totals"]["vacuous"].get<bool>());  // 0.8^j from 5 gives dozens of private answers
    CHECK(j["privacy"]["delta"].get<double>() == 1.0);
    CHECK(det["paper_matched"]["attainable"].get<bool>());
    CHECK(det["paper_matched"]["delta_k0"].get<double>() <= 0.05);
  }
}

TEST_SUITE("statistical") {
  TEST_CASE("answers average to the floored policy") {
    // x1 ~ Beta(k p1, k p2): sd <= sqrt(0.25 / 6); the mean of n = 200000 has sd <= 4.6e-4, and
    // 4.89 sd (two-sided p = 1e-6) is 2.3e-3
    DirichletTeacherParams p;
    p.eta = 0.05;
    p.tau = 0.01;
    auto mc = dprl::privacy::make_seeded_noise(1, 9, 9);
    DirichletTeacher t(p, *mc);
    auto noise = dprl::privacy::make_seeded_noise(4, 0, 0);
    std::vector<double> out(2);
    double sum = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
      t.answer(std::vector<double>{0.9, 0.1}, out, *noise);
      sum += out[0];
    }
    CHECK(std::fabs(sum / n - (0.9 * 0.9 + 0.05)) < 2.3e-3);
  }
}
