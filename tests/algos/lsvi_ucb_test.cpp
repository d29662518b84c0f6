#include "algos/lsvi_ucb.hpp"

#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <cmath>
#include <vector>

#include "engine/error.hpp"
#include "envs/linear_mdp.hpp"
#include "privacy/gaussian_mechanism.hpp"

using dprl::algos::LsviUcb;
using dprl::envs::LinearMdpModel;
using dprl::envs::LinearMdpParams;

namespace {

LinearMdpModel model(const char* kind, int S, int A, int H, int d = 4) {
  LinearMdpParams p;
  p.kind = kind;
  p.num_states = S;
  p.num_actions = A;
  p.horizon = H;
  p.dim = d;
  p.model_seed = 3;
  return dprl::envs::make_linear_mdp(p);
}

// Least-squares value iteration (Algorithm 1 with beta = 0) recomputed from scratch by dense
// solves over the recorded transitions of the first `episodes` episodes.
std::vector<double> lsvi_reference(const LinearMdpModel& m,
                                   const std::vector<LsviUcb::Transition>& tr, int episodes,
                                   double lambda) {
  const int S = m.num_states, A = m.num_actions, H = m.horizon, d = m.dim;
  std::vector<double> q(static_cast<std::size_t>(H) * S * A), v((H + 1) * S, 0.0);
  const std::size_t n = static_cast<std::size_t>(episodes) * H;
  for (int h = H - 1; h >= 0; --h) {
    Eigen::MatrixXd L = lambda * Eigen::MatrixXd::Identity(d, d);
    Eigen::VectorXd u = Eigen::VectorXd::Zero(d);
    for (std::size_t i = 0; i < n; ++i) {
      if (tr[i].h != h) continue;
      const auto f = m.phi(tr[i].s, tr[i].a);
      const Eigen::Map<const Eigen::VectorXd> fv(f.data(), d);
      L += fv * fv.transpose();
      u += fv * (m.reward(h, tr[i].s, tr[i].a) + v[(h + 1) * S + tr[i].next]);
    }
    const Eigen::VectorXd w = L.ldlt().solve(u);
    for (int s = 0; s < S; ++s) {
      double best = -1e300;
      for (int a = 0; a < A; ++a) {
        const auto f = m.phi(s, a);
        double x = 0;
        for (int i = 0; i < d; ++i) x += w[i] * f[i];
        x = std::min(x, static_cast<double>(H));
        q[(static_cast<std::size_t>(h) * S + s) * A + a] = x;
        best = std::max(best, x);
      }
      v[h * S + s] = best;
    }
  }
  return q;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("lsvi_ucb: zero bonus equals least-squares value iteration") {
    for (const char* kind : {"random", "tabular"}) {
      const auto m = model(kind, 4, 3, 5);
      LsviUcb::Params p;
      p.beta = 0;
      p.lambda = 0.7;
      LsviUcb algo(p);
      algo.record_transitions(true);
      const int K = 30;
      algo.run(m, K, 11);
      // the last update came before the last episode: it used K - 1 episodes of data
      const auto ref = lsvi_reference(m, algo.transitions(), K - 1, 0.7);
      REQUIRE(ref.size() == algo.q_table().size());
      for (std::size_t i = 0; i < ref.size(); ++i)
        CHECK(algo.q_table()[i] == doctest::Approx(ref[i]).epsilon(1e-9));
      CHECK(algo.updates() == K);
    }
  }

  TEST_CASE("lsvi_ucb: Sherman-Morrison inverse and Gram matrix agree with direct inversion") {
    const auto m = model("random", 5, 4, 3, 6);
    LsviUcb::Params p;
    p.batching = "adaptive";
    LsviUcb algo(p);
    algo.run(m, 400, 2);
    for (int h = 0; h < m.horizon; ++h) {
      const auto g = algo.gram(h), gi = algo.gram_inverse(h);
      const Eigen::Map<const Eigen::Matrix<double, -1, -1, Eigen::RowMajor>> G(g.data(), 6, 6),
          Gi(gi.data(), 6, 6);
      const Eigen::MatrixXd direct = G.inverse();
      CHECK((direct - Gi).cwiseAbs().maxCoeff() < 1e-9 * direct.cwiseAbs().maxCoeff());
    }
  }
}

namespace {

double mean_of(const std::vector<double>& x) {
  double m = 0;
  for (double v : x) m += v;
  return m / static_cast<double>(x.size());
}

double var_of(const std::vector<double>& x) {
  const double m = mean_of(x);
  double v = 0;
  for (double e : x) v += (e - m) * (e - m);
  return v / static_cast<double>(x.size() - 1);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("linear_mdp: optimal values of a two-state model by hand") {
    // tabular kind with S = 2, A = 2, H = 2: check V* against a hand-written backward induction
    const auto m = model("tabular", 2, 2, 2);
    double v2[2], v1[2];
    for (int s = 0; s < 2; ++s) v2[s] = std::max(m.reward(1, s, 0), m.reward(1, s, 1));
    for (int s = 0; s < 2; ++s) {
      double best = -1;
      for (int a = 0; a < 2; ++a) {
        const auto p = m.next(0, s, a);
        best = std::max(best, m.reward(0, s, a) + p[0] * v2[0] + p[1] * v2[1]);
      }
      v1[s] = best;
    }
    std::vector<std::int32_t> greedy;
    const auto opt = dprl::envs::optimal_values(m, &greedy);
    CHECK(opt.v[0] == doctest::Approx(v1[0]));
    CHECK(opt.v[1] == doctest::Approx(v1[1]));
    CHECK(opt.v[2] == doctest::Approx(v2[0]));
    CHECK(opt.v[4] == 0.0);
    // the optimal policy has zero regret: its value equals V* everywhere
    const auto vpi = dprl::envs::policy_values(m, greedy);
    for (std::size_t i = 0; i < vpi.size(); ++i) CHECK(vpi[i] == doctest::Approx(opt.v[i]));
    // and any other policy is no better
    std::vector<std::int32_t> other(greedy.size());
    for (std::size_t i = 0; i < other.size(); ++i) other[i] = 1 - greedy[i];
    const auto vo = dprl::envs::policy_values(m, other);
    CHECK(vo[0] <= opt.v[0] + 1e-12);
  }

  TEST_CASE("linear_mdp: the qiao_wang instance has the documented optimum") {
    const auto m = model("qiao_wang", 2, 100, 20);
    std::vector<std::int32_t> greedy;
    const auto opt = dprl::envs::optimal_values(m, &greedy);
    // optimal: a = 0 in state 0 and any a != 0 in state 1, reward 0.99 each step
    CHECK(opt.v[0] == doctest::Approx(0.99 * 20));
    CHECK(opt.v[1] == doctest::Approx(0.99 * 20));
    CHECK(greedy[0] == 0);
    CHECK(greedy[1] != 0);
    CHECK(m.dim == 10);
    for (int s = 0; s < 2; ++s)
      for (int a = 0; a < 100; ++a) {
        double n2 = 0;
        for (double x : m.phi(s, a)) n2 += x * x;
        CHECK(n2 <= 1.0 + 1e-12);
      }
  }

  TEST_CASE("linear_mdp: bad models and policies are rejected") {
    auto m = model("random", 3, 2, 2);
    auto bad = m;
    bad.features[0] = 2.0;  // ||phi|| > 1
    CHECK_THROWS_AS(bad.validate(), dprl::ParamError);
    bad = m;
    bad.transitions[0] += 0.5;  // a row that no longer sums to 1
    CHECK_THROWS_AS(bad.validate(), dprl::ParamError);
    std::vector<std::int32_t> pi(5, 0);  // wrong size
    CHECK_THROWS_AS(dprl::envs::policy_values(m, pi), dprl::ParamError);
    pi.assign(6, 7);  // action out of range
    CHECK_THROWS_AS(dprl::envs::policy_values(m, pi), dprl::ParamError);
  }

  TEST_CASE("lsvi_ucb: regret is exact and zero once the policy is optimal") {
    // on a deterministic chain LSVI-UCB finds the optimal policy; regret per episode is exactly
    // V*_1 - V^pi_1 (0 for the optimal policy), so it falls off once exploration is done
    LinearMdpParams p;
    p.kind = "chain";
    p.chain_n = 4;
    p.chain_p = 1.0;
    p.horizon = 6;
    const auto m = dprl::envs::make_linear_mdp(p);
    LsviUcb::Params ap;
    ap.beta = 0.5;
    ap.lambda = 0.01;
    ap.clip = "remaining";
    LsviUcb algo(ap);
    const auto cum = algo.run(m, 300, 1);
    const auto opt = dprl::envs::optimal_values(m);
    const auto vpi = dprl::envs::policy_values(m, algo.greedy());
    CHECK(vpi[0] == doctest::Approx(opt.v[0]));
    CHECK(cum[299] - cum[199] < 0.25 * cum[99]);  // UCB keeps probing rarely, ever less
    CHECK(cum[0] >= 0.0);
    for (std::size_t k = 1; k < cum.size(); ++k) CHECK(cum[k] >= cum[k - 1] - 1e-12);
  }

  TEST_CASE("lsvi_ucb: update schedules") {
    const auto m = model("random", 4, 3, 5);
    LsviUcb::Params p;
    p.batching = "static";
    p.batches = 10;
    LsviUcb a(p);
    a.run(m, 100, 1);
    CHECK(a.updates() == 10);
    p.batching = "adaptive";
    p.max_updates = 0;
    LsviUcb b(p);
    b.run(m, 2000, 1);
    // determinant doubling: far fewer updates than episodes, more than one
    CHECK(b.updates() > 1);
    CHECK(b.updates() < 200);
    p.max_updates = 3;
    LsviUcb c(p);
    c.run(m, 2000, 1);
    CHECK(c.updates() == 3);
  }

  TEST_CASE("lsvi_ucb: bad parameters are rejected") {
    const auto m = model("random", 3, 2, 2);
    LsviUcb::Params p;
    CHECK_THROWS_AS(LsviUcb(p).run(m, 0, 1), dprl::ParamError);
    p.batching = "static";
    p.batches = 50;
    CHECK_THROWS_AS(LsviUcb(p).run(m, 10, 1), dprl::ParamError);
    using dprl::ParamMap;
    auto bad = [](const char* key, const char* value) {
      ParamMap pm;
      pm.push_back({key, {value, "test"}});
      (void)dprl::read_params<LsviUcb::Params>(pm, "lsvi_ucb");
    };
    CHECK_THROWS_AS(bad("epsilon", "0"), dprl::ParamError);
    CHECK_THROWS_AS(bad("epsilon", "-1"), dprl::ParamError);
    CHECK_THROWS_AS(bad("delta", "1"), dprl::ParamError);
    CHECK_THROWS_AS(bad("delta", "0"), dprl::ParamError);
    CHECK_THROWS_AS(bad("switch_ratio", "1"), dprl::ParamError);
    CHECK_THROWS_AS(bad("batching", "sometimes"), dprl::ParamError);
    CHECK_THROWS_AS(bad("failure_prob", "1"), dprl::ParamError);
    CHECK_THROWS_AS(bad("beta", "-1"), dprl::ParamError);
  }
}

TEST_SUITE("statistical") {
  TEST_CASE("lsvi_ucb private: released statistics carry the calibrated Gaussian noise") {
    // adaptive batching reads the private Gram matrices after every episode: after K = 7 leaves
    // the tree prefix is the sum of popcount(7) = 3 node noises, so every upper-triangle entry of
    // Lambda~_h - Lambda_h - shift I is N(0, 3 sigma_gram^2); the target noise is N(0, sigma_u^2)
    LinearMdpParams mp;
    mp.kind = "random";
    mp.num_states = 3;
    mp.num_actions = 4;
    mp.dim = 30;
    mp.horizon = 4;
    const auto m = dprl::envs::make_linear_mdp(mp);
    std::vector<double> gram_noise, target_noise;
    double sg = 0, st = 0;
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      LsviUcb::Params p;
      p.private_ = true;
      p.batching = "adaptive";
      p.epsilon = 2;
      p.delta = 1e-5;
      LsviUcb algo(p);
      algo.run(m, 7, seed);
      REQUIRE(algo.tree_leaves() == 7);
      sg = algo.sigma_gram();
      st = algo.sigma_target();
      for (int h = 0; h < m.horizon; ++h) {
        const auto pg = algo.private_gram(h), g = algo.gram(h);
        for (int i = 0; i < m.dim; ++i)
          for (int j = i; j < m.dim; ++j) {
            const std::size_t ij = static_cast<std::size_t>(i) * m.dim + j;
            const std::size_t ji = static_cast<std::size_t>(j) * m.dim + i;
            CHECK(pg[ij] == pg[ji]);  // symmetric
            gram_noise.push_back(pg[ij] - g[ij] - (i == j ? algo.gram_shift() : 0.0));
          }
      }
      for (double x : algo.last_target_noise()) target_noise.push_back(x);
    }
    const double n = static_cast<double>(gram_noise.size());  // 4 seeds x 4 steps x 465
    CHECK(std::abs(mean_of(gram_noise)) < 5 * std::sqrt(3 * sg * sg / n));
    // sample variance within 5 standard errors (sd of s^2 ~ sigma^2 sqrt(2 / n))
    CHECK(std::abs(var_of(gram_noise) / (3 * sg * sg) - 1) < 5 * std::sqrt(2 / n));
    const double nt = static_cast<double>(target_noise.size());  // 4 x 4 x 30
    CHECK(std::abs(var_of(target_noise) / (st * st) - 1) < 5 * std::sqrt(2 / nt));
  }

  TEST_CASE("lsvi_ucb private: calibration meets the budget and matches Gaussian composition") {
    const auto m = model("random", 3, 2, 5, 6);
    for (const char* batching : {"static", "adaptive"})
      for (double eps : {0.5, 5.0}) {
        LsviUcb::Params p;
        p.private_ = true;
        p.batching = batching;
        p.epsilon = eps;
        p.delta = 1e-5;
        LsviUcb algo(p);
        algo.run(m, 64, 3);
        // the accounted epsilon never exceeds the budget
        CHECK(algo.epsilon_spent() <= eps * (1 + 1e-9));
        // the planned composition is exactly a Gaussian with mu^2 = sum count / z^2 (equal
        // shares): each channel's z is sqrt(2 count) / mu up to the accountant's slack (< 3%)
        const double mu = 1.0 / dprl::privacy::analytic_gaussian_sigma(eps, 1e-5, 1.0);
        const auto& z = algo.noise_multipliers();
        REQUIRE(z.size() == 2);
        const double levels =
            std::floor(std::log2(
                std::string(batching) == "static" ? static_cast<double>(algo.updates()) : 64.0)) +
            1;
        CHECK(z[0] * mu / std::sqrt(2 * levels) == doctest::Approx(1.0).epsilon(0.03));
      }
  }
}
