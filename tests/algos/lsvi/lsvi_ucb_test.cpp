#include "algos/lsvi/lsvi_ucb.hpp"
#include "algos/lsvi/lsvi_ucb_private.hpp"

#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <bit>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/error.hpp"
#include "envs/linear_mdp.hpp"
#include "privacy/gaussian_mechanism.hpp"
#include "tests/test_util.hpp"

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

using test_util::gdp_epsilon;

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
      p.noise = "seeded";  // a fixed seed: the test cannot flake
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
        p.noise = "seeded";
        LsviUcb algo(p);
        algo.run(m, 64, 3);
        // independent of the code's sensitivities: under replace-one episode (H = 5, features of
        // norm <= 1, r + V in [0, H + 1]) a user changes the H Gram upper triangles by at most
        // sqrt(2 H) in L2 (sqrt(2) per step, phi = e_1 against psi = e_2) and the H targets by at
        // most 2 sqrt(H) (H + 1); the noise actually added, over those, gives the true noise
        // multipliers, and the releases made (L tree levels, one target per update) compose to
        // mu-GDP exactly: its epsilon must be within the budget
        const double H = 5,
                     levels_made = std::bit_width(static_cast<std::uint64_t>(algo.tree_leaves()));
        const double zg = algo.sigma_gram() / std::sqrt(2 * H);
        const double zt = algo.sigma_target() / (2 * std::sqrt(H) * (H + 1));
        const double mu =
            std::sqrt(levels_made / (zg * zg) + static_cast<double>(algo.updates()) / (zt * zt));
        CHECK(gdp_epsilon(mu, 1e-5) <= eps);
        CHECK(algo.epsilon_spent() <= eps * (1 + 1e-9));
        // the planned composition is exactly a Gaussian with mu^2 = sum count / z^2 (equal
        // shares): each channel's z is sqrt(2 count) / mu up to the accountant's slack (< 3%)
        const double mu_budget = 1.0 / dprl::privacy::analytic_gaussian_sigma(eps, 1e-5, 1.0);
        const auto& z = algo.noise_multipliers();
        REQUIRE(z.size() == 2);
        const double levels =
            std::floor(std::log2(
                std::string(batching) == "static" ? static_cast<double>(algo.updates()) : 64.0)) +
            1;
        CHECK(z[0] * mu_budget / std::sqrt(2 * levels) == doctest::Approx(1.0).epsilon(0.03));
      }
  }
}

TEST_SUITE("unit") {
  TEST_CASE("lsvi_ucb_plus private: V and Vc stay in [0, H], as the target sensitivities assume") {
    // the model of configs/paper002/tabular_private_plus.yaml; per-episode updates push the noisy
    // regressions furthest (the unclamped code reached Vc = 5.15 > H and V = -4.7)
    LinearMdpParams mp;
    mp.kind = "tabular";
    mp.num_states = 3;
    mp.num_actions = 2;
    mp.horizon = 5;
    mp.model_seed = 0;
    const auto m = dprl::envs::make_linear_mdp(mp);
    for (const char* clip : {"horizon", "remaining"})
      for (double eps : {0.5, 10.0}) {
        LsviUcb::Params p;
        p.variant = "lsvi_ucb_plus";
        p.private_ = true;
        p.noise = "seeded";
        p.epsilon = eps;
        p.lambda = 0.01;
        p.variance_coeff = 0;
        p.clip = clip;
        LsviUcb algo(p);
        algo.run(m, 1000, 1);
        const int S = 3, H = 5;
        for (int h = 0; h <= H; ++h)
          for (int x = 0; x < S; ++x) {
            const double cap = std::string(clip) == "remaining" ? H - h : (h == H ? 0 : H);
            const double v = algo.values()[h * S + x], vc = algo.pessimistic_values()[h * S + x];
            CHECK(v >= 0.0);
            CHECK(v <= cap);
            CHECK(vc >= 0.0);
            CHECK(vc <= cap);
          }
      }
  }

  TEST_CASE(
      "lsvi_ucb private: replace doubles the target noise and multiplies the Gram noise by sqrt 2, "
      "and the record states the relation") {
    const auto m = model("random", 3, 2, 4, 5);
    auto run = [&](const char* relation) {
      LsviUcb::Params p;
      p.private_ = true;
      p.batching = "static";
      p.noise = "seeded";
      p.neighbouring = relation;
      auto algo = std::make_unique<LsviUcb>(p);
      algo->run(m, 32, 2);
      return algo;
    };
    const auto rep = run("replace"), add = run("add-remove");
    // the same calibrated noise multipliers; the noise scales follow the sensitivities:
    // targets sqrt(H) (H + 1) x 2, Gram sqrt(H) x sqrt(2) (H = 4)
    CHECK(rep->noise_multipliers() == add->noise_multipliers());
    CHECK(add->sigma_target() == doctest::Approx(add->noise_multipliers()[1] * 2 * 5));
    CHECK(rep->sigma_target() == doctest::Approx(2 * add->sigma_target()).epsilon(1e-12));
    CHECK(add->sigma_gram() == doctest::Approx(add->noise_multipliers()[0] * 2));
    CHECK(rep->sigma_gram() == doctest::Approx(std::sqrt(2.0) * add->sigma_gram()).epsilon(1e-12));
    REQUIRE(rep->privacy().has_value());
    CHECK(rep->privacy()->neighbouring == dprl::NeighbouringRelation::kReplaceOne);
    CHECK(add->privacy()->neighbouring == dprl::NeighbouringRelation::kAddRemove);
    CHECK(rep->privacy()->unit == "episode (one user)");
    const auto d = nlohmann::json::parse(rep->privacy()->details_json);
    CHECK(d["channels"][1]["l2_sensitivity"].get<double>() == doctest::Approx(2 * 2 * 5));
  }

  TEST_CASE("lsvi_ucb private: seeded runs at two epsilons do not share their noise draws") {
    // the same standard normals at two scales would let anyone solve for the un-noised
    // statistics: the stream is derived from the privacy parameters as well
    const auto m = model("random", 3, 2, 4, 5);
    auto noise_at = [&](double eps) {
      LsviUcb::Params p;
      p.private_ = true;
      p.batching = "static";
      p.batches = 1;
      p.noise = "seeded";
      p.epsilon = eps;
      LsviUcb algo(p);
      algo.run(m, 8, 2);
      return std::pair{algo.last_target_noise(), algo.sigma_target()};
    };
    const auto [n1, s1] = noise_at(1.0);
    const auto [n2, s2] = noise_at(2.0);
    REQUIRE(n1.size() == n2.size());
    int proportional = 0;
    for (std::size_t i = 0; i < n1.size(); ++i)
      proportional += std::abs(n1[i] / s1 - n2[i] / s2) < 1e-9 * std::abs(n1[i] / s1);
    CHECK(proportional == 0);
    CHECK(noise_at(1.0).first == n1);  // and reproducible
  }

  TEST_CASE("lsvi_ucb private: secure noise covers the snapping and is the default") {
    const auto m = model("random", 3, 2, 4, 5);
    LsviUcb::Params p;
    p.private_ = true;
    p.batching = "static";
    LsviUcb algo(p);
    algo.run(m, 16, 2);
    REQUIRE(algo.privacy().has_value());
    CHECK(algo.privacy()->noise_source == "os_entropy(secure, chacha20)");
    CHECK_FALSE(algo.privacy()->reproducible_noise);
    const auto d = nlohmann::json::parse(algo.privacy()->details_json);
    for (const auto& c : d["channels"]) {
      // sigma = z (Delta + sqrt(n) g) with g the channel's planned grid (privacy/
      // secure_release.hpp), g <= (Delta / sqrt(n)) 2^-12: the snapped sensitivity exceeds Delta
      // by at most Delta 2^-12 (plus the rounding of sigma / z, a few ulps: 1e-15)
      const double sens = c["l2_sensitivity"], snapped = c["l2_sensitivity_snapped"];
      const double sigma = c["sigma"], z = c["noise_multiplier"];
      CHECK(snapped > sens);
      CHECK(snapped <= sens * (1.0 + 0x1p-12 + 1e-15));
      CHECK(sigma == doctest::Approx(z * snapped).epsilon(1e-12));
    }
  }
}

TEST_SUITE("unit") {
  TEST_CASE("lsvi_ucb: secure releases are composed with the discrete Gaussian's proven curve") {
    // Two channels of unsampled releases. With secure noise each release is a discrete Gaussian:
    // its proven RDP is a / (2 z^2) (the continuous Gaussian's curve, but the PLD accountant has
    // no proven PLD for it), so every accountant must report the RDP conversion of that curve.
    // The continuous PLD is tighter, so a pld figure below the RDP one means the continuous curve
    // was used for a formal record.
    std::vector<dprl::algos::lsvi::Channel> ch(2);
    ch[0].z = 3.0;
    ch[1].z = 5.0;
    const std::vector<std::int64_t> counts = {8, 20};
    const double delta = 1e-5;
    const double rdp = dprl::algos::lsvi::composed_epsilon(ch, counts, delta, "rdp", true);
    const double pld_secure = dprl::algos::lsvi::composed_epsilon(ch, counts, delta, "pld", true);
    const double pld_seeded = dprl::algos::lsvi::composed_epsilon(ch, counts, delta, "pld", false);
    const double rdp_seeded = dprl::algos::lsvi::composed_epsilon(ch, counts, delta, "rdp", false);
    CHECK(pld_secure == doctest::Approx(rdp).epsilon(1e-12));
    CHECK(pld_seeded < 0.97 * pld_secure);  // the continuous PLD is the tighter, unproven curve
    // unsampled: the discrete Gaussian's RDP curve is the continuous one, so rdp agrees
    CHECK(rdp_seeded == doctest::Approx(rdp).epsilon(1e-9));
  }
}
