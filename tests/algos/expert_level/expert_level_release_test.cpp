// DataRelease (paper 000 Alg. 1-2), the count function and the expert queries.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "algos/core/nn_policy.hpp"
#include "algos/expert_level/data_release.hpp"
#include "algos/expert_level/expert_queries.hpp"
#include "algos/expert_level/expert_rollouts.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "envs/register_envs.hpp"

using namespace dprl;
using namespace dprl::algos;

namespace {

// Trajectories of obs_dim 4 and A actions: episode e belongs to expert e % m; its observations
// are (e, t, 0, 0) and every action is `action`.
Dataset make_data(int m, int per_expert, int length, int A, int action = 0) {
  DatasetInfo info;
  info.dataset_id = "test/release";
  info.observation_space = Space::box(4, -1e9, 1e9);
  info.action_space = Space::discrete(A);
  Dataset ds(info);
  std::vector<float> obs, act, rew;
  std::vector<std::uint8_t> term, trunc;
  for (int e = 0; e < m * per_expert; ++e) {
    obs.clear(), act.clear(), rew.clear(), term.clear(), trunc.clear();
    for (int t = 0; t <= length; ++t) obs.insert(obs.end(), {float(e), float(t), 0.0f, 0.0f});
    for (int t = 0; t < length; ++t) {
      act.push_back(static_cast<float>(action));
      rew.push_back(1.0f);
      term.push_back(t + 1 == length ? 1 : 0);
      trunc.push_back(0);
    }
    ds.add_episode(obs, act, rew, term, trunc, e % m, e);
  }
  return ds;
}

// Every expert's greedy action is 0 (all agree with action 0).
class AgreeingExperts final : public ExpertPanel {
 public:
  AgreeingExperts(int m, int A) : m_(m), a_(A) {}
  int num_experts() const override { return m_; }
  int num_actions() const override { return a_; }
  int obs_dim() const override { return 4; }
  void greedy(const float*, int n, std::span<std::int32_t> out) override {
    std::fill(out.begin(), out.end(), 0);
  }

 private:
  int m_, a_;
};

// No Laplace noise; uniform words from a seeded generator (for the shuffle).
class NoLaplace final : public privacy::NoiseSource {
 public:
  NoLaplace() : NoiseSource(false), rng_(7) {}
  std::string name() const override { return "test"; }
  std::uint64_t next_u64() override { return rng_.next_u64(); }
  double laplace(double) override { return 0.0; }

 private:
  Rng rng_;
};

}  // namespace

TEST_CASE("release constants reproduce the spec table (m = 3000, p_min = 0.02)" *
          doctest::test_suite("unit")) {
  // env, eps1, delta1, T, L, |A|, eps', delta', theta, shift, E[theta_hat], k*, Thm 3.20 eps
  // (spec000 sec. 2.4, recomputed from Alg. 2; delta = 1/m, delta1 = delta or 9 delta / 10)
  struct Row {
    double eps1, delta1;
    std::int64_t T, L;
    int A;
    double eps_p, delta_p, theta, shift, e_theta, k_star, thm320;
  };
  const double d = 1.0 / 3000;
  const Row rows[] = {
      {10, d, 25, 200, 3, 0.1199, 3.33e-8, 443, 575, 1017, 26.5, 6.62},
      {7.5, d, 20, 200, 3, 0.1005, 4.17e-8, 523, 676, 1199, 22.5, 4.65},
      {5, d, 20, 200, 3, 0.0670, 4.17e-8, 771, 1014, 1786, 12.7, 2.88},
      {7.5, 0.9 * d, 25, 200, 2, 0.0894, 3.0e-8, 585, 775, 1360, 39.2, 4.62},
      {5.625, 0.9 * d, 20, 200, 2, 0.0749, 3.75e-8, 693, 913, 1605, 31.0, 3.30},
      {7.5, 0.9 * d, 100, 1000, 4, 0.0447, 1.5e-9, 1144, 1819, 2963, 0.2, 4.59},
      {5.625, 0.9 * d, 62, 1000, 4, 0.0426, 2.42e-9, 1200, 1865, 3065, -0.3, 3.28},
      {10, d, 50, 50, 4, 0.0848, 6.67e-8, 615, 780, 1395, 12.4, 6.57},
      {7.5, 0.9 * d, 50, 50, 4, 0.0632, 6.0e-8, 817, 1053, 1869, 7.6, 4.60},
  };
  for (const Row& r : rows) {
    DataReleaseParams p;
    p.epsilon1 = r.eps1;
    p.delta1 = r.delta1;
    p.trajectories = r.T;
    p.max_length = r.L;
    const auto c = release_constants(p);
    CAPTURE(r.eps1);
    CAPTURE(r.T);
    // the table rounds to 3-4 significant digits: compare at half a unit of its last digit
    CHECK(c.svt.eps_prime == doctest::Approx(r.eps_p).epsilon(0.0006));
    CHECK(c.svt.delta_prime == doctest::Approx(r.delta_p).epsilon(0.002));
    CHECK(std::abs(c.svt.theta - r.theta) <= 0.5);
    CHECK(std::abs(c.svt.threshold_shift - r.shift) <= 0.5);
    CHECK(std::abs(c.expected_threshold - r.e_theta) <= 1.0);
    CHECK(std::abs(max_stable_length(c, 3000, r.A, 0.02) - r.k_star) <= 0.05);
    CHECK(std::abs(c.epsilon_exact - r.thm320) <= 0.005);
    CHECK(c.epsilon_closed_form == doctest::Approx(r.eps1).epsilon(1e-12));
    CHECK(c.epsilon_exact <= r.eps1);
  }
  // Figure 4 (Acrobot, eps = 10, T = 25, delta = 1/m): E[theta_hat] and k* for m = 1000, 2000
  for (auto [m, e_theta, k_star] : {std::tuple{1000, 918.0, 2.1}, {2000, 981.0, 17.5}}) {
    DataReleaseParams p;
    p.epsilon1 = 10;
    p.delta1 = 1.0 / m;
    p.trajectories = 25;
    const auto c = release_constants(p);
    CHECK(std::abs(c.expected_threshold - e_theta) <= 1.0);
    CHECK(std::abs(max_stable_length(c, m, 3, 0.02) - k_star) <= 0.05);
  }
}

TEST_CASE("exact calibration spends exactly epsilon1 and allows a larger eps'" *
          doctest::test_suite("unit")) {
  DataReleaseParams p;
  p.epsilon1 = 10;
  p.delta1 = 1.0 / 3000;
  p.trajectories = 25;
  const auto paper = release_constants(p);
  p.calibration = "exact";
  const auto exact = release_constants(p);
  CHECK(exact.epsilon_exact <= 10.0);
  CHECK(exact.epsilon_exact == doctest::Approx(10.0).epsilon(1e-9));
  CHECK(exact.svt.eps_prime > paper.svt.eps_prime);
  CHECK(exact.expected_threshold < paper.expected_threshold);
}

TEST_CASE("prefix counter equals the direct sum of products" * doctest::test_suite("unit")) {
  const int m = 37, A = 3, L = 250;
  const double p_min = 0.02, hi = 1 - (A - 1) * p_min;
  PrefixCounter counter(m, A, p_min, L);
  CHECK(counter.log_count() == doctest::Approx(std::log(37.0)));
  Rng rng(3);
  std::vector<std::int32_t> g(m);
  std::vector<int> agree(m, 0);
  for (int k = 1; k <= L; ++k) {
    for (int i = 0; i < m; ++i) {
      // expert i agrees with probability (i + 1) / (m + 1): very different counts
      g[i] = rng.uniform() < (i + 1.0) / (m + 1.0) ? 1 : 2;
      agree[i] += g[i] == 1;
    }
    const double got = counter.extend(g, 1);
    // reference: log-sum-exp of the per-expert log products, in long double
    long double mx = -1e300L;
    std::vector<long double> lp(m);
    for (int i = 0; i < m; ++i) {
      lp[i] = agree[i] * std::log((long double)hi) + (k - agree[i]) * std::log((long double)p_min);
      mx = std::max(mx, lp[i]);
    }
    long double s = 0;
    for (int i = 0; i < m; ++i) s += std::exp(lp[i] - mx);
    const double want = static_cast<double>(mx + std::log(s));
    // both in double precision over <= 250 terms: relative error far below 1e-12
    REQUIRE(got == doctest::Approx(want).epsilon(1e-12));
  }
  CHECK_THROWS_AS(counter.extend(g, 1), ParamError);         // longer than max_length
  CHECK_THROWS_AS(PrefixCounter(3, 2, 0.6, 5), ParamError);  // p_min > 1/|A|
  CHECK_THROWS_AS(PrefixCounter(3, 2, 0.0, 5), ParamError);
}

TEST_CASE("network experts answer exactly the collecting policy's greedy action" *
          doctest::test_suite("unit")) {
  Rng rng(11);
  std::vector<NetExperts::Expert> experts;
  std::vector<NnPolicy> policies;
  for (int i = 0; i < 6; ++i) {
    NetExperts::Expert e;
    e.actor = nn::Mlp(nn::MlpShape({4, 32, 16, 3}, nn::Act::kTanh));
    nn::init_orthogonal(e.actor.shape(), e.actor.data(), rng, std::sqrt(2.0), 0.01);
    NnPolicy pol("cartpole", NnPolicy::Mode::kArgmax, e.actor, 3);
    if (i % 2) {
      e.obs_mean = {0.1f, -0.2f, 0.0f, 0.3f};
      e.obs_var = {1.0f, 2.0f, 0.5f, 4.0f};
      pol.set_obs_norm(e.obs_mean, e.obs_var);
    }
    policies.push_back(std::move(pol));
    experts.push_back(std::move(e));
  }
  NetExperts panel(std::move(experts), 3, 2);
  const int n = 300;
  std::vector<float> obs(4 * n);
  for (auto& x : obs) x = static_cast<float>(rng.normal());
  std::vector<std::int32_t> out(6 * n);
  panel.greedy(obs.data(), n, out);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < n; ++j)
      REQUIRE(out[i * n + j] ==
              policies[i].act_discrete(std::span<const float>(obs.data() + 4 * j, 4), {}));
}

TEST_CASE(
    "without noise the stable prefix is the longest prefix whose count clears the shifted "
    "threshold" *
    doctest::test_suite("unit")) {
  const int m = 3000;
  AgreeingExperts experts(m, 2);
  const Dataset data = make_data(m, 1, 60, 2);
  DataReleaseParams p;
  p.epsilon1 = 7.5;
  p.delta1 = 0.9 / m;
  p.trajectories = 25;
  p.max_length = 200;
  NoLaplace noise;
  const auto r = data_release(data, experts, p, noise);
  // all experts agree: count(k) = m 0.98^k > E[theta_hat] exactly for k <= floor(k*) = 39
  const double k_star = max_stable_length(r.constants, m, 2, 0.02);
  CHECK(k_star == doctest::Approx(39.2).epsilon(0.002));
  CHECK(r.examined.size() == 25);
  CHECK(r.stable_prefixes == 25);
  for (std::size_t e : r.examined) CHECK(r.stable_length[e] == 39);
  CHECK(r.stable_transitions == 25 * 39);
  CHECK(r.queries == 25 * 40);  // 39 above, then the first below
  std::int64_t unexamined = 0;
  for (auto k : r.stable_length) unexamined += k == 0;
  CHECK(unexamined == m - 25);
}

TEST_CASE("split_release partitions every trajectory into its prefix and its tail" *
          doctest::test_suite("unit")) {
  const Dataset data = make_data(4, 2, 5, 2);
  std::vector<std::int64_t> k = {0, 5, 2, 1, 0, 0, 3, 0};
  const auto out = split_release(data, k);
  CHECK(out.stable.num_episodes() == 4);
  CHECK(out.stable.num_transitions() == 11);
  CHECK(out.unstable.num_episodes() == 7);  // episode 1 is stable in full
  CHECK(out.unstable.num_transitions() == 40 - 11);
  // episode 2: prefix of 2 (cut: no flag), tail of 3 from s_3 (keeps the final termination)
  CHECK(out.stable.user_id(1) == 2);
  CHECK(out.stable.episode_length(1) == 2);
  CHECK_FALSE(out.stable.terminated(out.stable.episode_start(1) + 1));
  CHECK(out.stable.terminated(out.stable.episode_start(0) + 4));  // full episode 1 keeps it
  const std::size_t tail = 1;  // unstable episodes: 0, tail of 2, tail of 3, 4, 5, tail of 6, 7
  CHECK(out.unstable.user_id(tail) == 2);
  CHECK(out.unstable.episode_length(tail) == 3);
  CHECK(out.unstable.obs(out.unstable.episode_start(tail), tail)[1] == 2.0f);  // s_3: t = 2
  CHECK(out.unstable.terminated(out.unstable.episode_start(tail) + 2));
  CHECK(out.unstable.episode_seed(tail) == 2);
  out.stable.validate("stable");
  out.unstable.validate("unstable");
}

TEST_CASE("bad release input is refused naming the parameter" * doctest::test_suite("unit")) {
  AgreeingExperts experts(4, 2);
  NoLaplace noise;
  DataReleaseParams p;
  p.epsilon1 = 5;
  p.delta1 = 1e-3;
  p.trajectories = 3;
  p.max_length = 10;
  const Dataset data = make_data(4, 2, 5, 2);
  p.p_min = 0.6;
  CHECK_THROWS_AS(data_release(data, experts, p, noise), ParamError);
  p.p_min = 0.02;
  p.trajectories = 9;  // more than the 8 episodes
  CHECK_THROWS_WITH_AS(data_release(data, experts, p, noise),
                       doctest::Contains("release.trajectories"), ParamError);
  p.trajectories = 3;
  p.max_length = 4;  // shorter than the episodes
  CHECK_THROWS_WITH_AS(data_release(data, experts, p, noise),
                       doctest::Contains("release.max_length"), DataError);
  p.max_length = 10;
  AgreeingExperts three(3, 2);  // user ids 0..3 but only 3 experts
  CHECK_THROWS_AS(data_release(data, three, p, noise), DataError);
  AgreeingExperts four_actions(4, 4);
  CHECK_THROWS_AS(data_release(data, four_actions, p, noise), DataError);
  // unequal trajectories per expert: the shuffle would not draw experts uniformly
  Dataset uneven = make_data(4, 2, 5, 2);
  uneven.set_user_id(0, 1);
  CHECK_THROWS_WITH_AS(data_release(uneven, experts, p, noise), doctest::Contains("same number"),
                       DataError);
  p.epsilon1 = 1e4;  // the closed form no longer bounds the exact composition
  CHECK_THROWS_WITH_AS(release_constants(p), doctest::Contains("calibration: exact"), ParamError);
}

namespace {

double laplace_sf(double x, double b) {  // P(Lap(b) > x)
  return x >= 0 ? 0.5 * std::exp(-x / b) : 1.0 - 0.5 * std::exp(x / b);
}

}  // namespace

TEST_CASE("exact prefix counts are the count of Eq. 12 at every length" *
          doctest::test_suite("unit")) {
  // 10 experts, 3 actions; expert i plays action 0 at step t when (i + t) % 3 != 0, else 1; the
  // episodes play 0 at every step, except episode 1 at step 2 (action 2, which no expert plays)
  const int m = 10, A = 3, L = 6;
  const double p_min = 0.05, hi = 1 - (A - 1) * p_min;
  Dataset data = make_data(m, 1, L, A);
  FunctionExperts experts(m, A, 4, [](int i, std::span<const float> obs) {
    return (i + static_cast<int>(obs[1])) % 3 != 0 ? 0 : 1;
  });
  const std::vector<std::size_t> episodes = {0, 1, 3};
  // episode 1 with action 2 at step 2: rebuild it in a copy of the data
  DatasetInfo info = data.info();
  Dataset d2(info);
  for (std::size_t e = 0; e < data.num_episodes(); ++e) {
    std::vector<float> obs, act, rew;
    std::vector<std::uint8_t> term, trunc;
    for (std::size_t t = 0; t <= data.episode_length(e); ++t) {
      const auto o = data.obs(data.episode_start(e) + t, e);
      obs.insert(obs.end(), o.begin(), o.end());
    }
    for (std::size_t t = 0; t < data.episode_length(e); ++t) {
      act.push_back(e == 1 && t == 2 ? 2.0f : 0.0f);
      rew.push_back(1.0f);
      term.push_back(t + 1 == data.episode_length(e) ? 1 : 0);
      trunc.push_back(0);
    }
    d2.add_episode(obs, act, rew, term, trunc, static_cast<std::int64_t>(e % m),
                   static_cast<std::int64_t>(e));
  }
  const auto counts = exact_prefix_counts(d2, episodes, experts, p_min, 4);
  REQUIRE(counts.size() == 3);
  for (std::size_t c = 0; c < 3; ++c) {
    CAPTURE(c);
    REQUIRE(counts[c].size() == 4);  // max_length 4 of the 6 steps
    for (int k = 1; k <= 4; ++k) {
      double want = 0;
      for (int i = 0; i < m; ++i) {
        double prod = 1;
        for (int t = 0; t < k; ++t) {
          const int logged = episodes[c] == 1 && t == 2 ? 2 : 0;
          const int greedy = (i + t) % 3 != 0 ? 0 : 1;
          prod *= greedy == logged ? hi : p_min;
        }
        want += prod;
      }
      CHECK(counts[c][static_cast<std::size_t>(k - 1)] == doctest::Approx(want).epsilon(1e-12));
    }
  }
  // experts that disagree on the observation size are refused
  FunctionExperts wrong(m, A, 5, [](int, std::span<const float>) { return 0; });
  CHECK_THROWS_AS(exact_prefix_counts(d2, episodes, wrong, p_min, 4), DataError);
}

TEST_CASE("the stable prefix length follows the sparse-vector law exactly" *
          doctest::test_suite("statistical")) {
  // Trajectories of length 6 whose prefixes all experts agree with: count(k) = m 0.98^k for a
  // known m straddling the expected threshold. Stable length k = j has probability
  //   P(j) = E_theta [ prod_{i <= j} S(theta - c_i) (1 - S(theta - c_{j+1})) ]   (j < 6)
  //   P(6) = E_theta [ prod_{i <= 6} S(theta - c_i) ],
  // theta = theta0 + shift + Lap(2/eps'), S(x) = P(Lap(4/eps') > x); integrated numerically.
  DataReleaseParams p;
  p.epsilon1 = 50;
  p.delta1 = 1e-3;
  p.trajectories = 24000;
  p.max_length = 6;
  p.calibration = "exact";
  const auto c = release_constants(p);
  const int m = static_cast<int>(std::lround(c.expected_threshold / std::pow(0.98, 3)));
  REQUIRE(m > 100);
  const int per = (24000 + m - 1) / m;
  AgreeingExperts experts(m, 2);
  const Dataset data = make_data(m, per, 6, 2);
  auto noise = privacy::make_seeded_noise(20240601);
  const auto r = data_release(data, experts, p, *noise);
  std::vector<double> observed(7, 0.0);
  for (std::size_t e : r.examined) observed[r.stable_length[e]] += 1;

  const double b1 = c.svt.threshold_noise_scale, b2 = c.svt.query_noise_scale;
  const double mu = c.expected_threshold;
  std::vector<double> counts(7);
  for (int k = 1; k <= 6; ++k) counts[k] = m * std::pow(0.98, k);
  std::vector<double> prob(7, 0.0);
  const int grid = 400000;
  const double lo = mu - 40 * b1, hi = mu + 40 * b1, h = (hi - lo) / grid;
  for (int g = 0; g <= grid; ++g) {  // Simpson's rule over the threshold's density
    const double th = lo + g * h;
    const double w = (g == 0 || g == grid ? 1 : (g % 2 ? 4 : 2)) * h / 3;
    const double f = std::exp(-std::abs(th - mu) / b1) / (2 * b1);
    double run = 1.0;
    for (int j = 0; j < 6; ++j) {
      const double s = laplace_sf(th - counts[j + 1], b2);
      prob[j] += w * f * run * (1 - s);
      run *= s;
    }
    prob[6] += w * f * run;
  }
  double chi2 = 0, total = 0;
  for (double q : prob) total += q;
  CHECK(total == doctest::Approx(1.0).epsilon(1e-9));
  const double n = static_cast<double>(r.examined.size());
  for (int j = 0; j <= 6; ++j) {
    REQUIRE(n * prob[j] > 20);  // every bin well populated
    chi2 += (observed[j] - n * prob[j]) * (observed[j] - n * prob[j]) / (n * prob[j]);
  }
  // chi-squared with 6 degrees of freedom: P(chi2 > 38.258) = 1e-6 (upper quantile)
  CHECK(chi2 < 38.258);
}

TEST_CASE("the published D_stable names no expert, recorded episode or seed" *
          doctest::test_suite("unit")) {
  // episodes with user ids e % 4, seeds e, and source metadata holding a collection seed
  Dataset data = make_data(4, 3, 6, 2);
  DatasetInfo info = data.info();
  info.metadata_json = R"({"population": "p", "collect_seed": 1234567890123})";
  Dataset tagged(info);
  for (std::size_t e = 0; e < data.num_episodes(); ++e)
    tagged.add_episode_of(data, e, data.user_id(e));
  const std::vector<std::size_t> examined = {7, 2, 9, 4};
  std::vector<std::int64_t> k(tagged.num_episodes(), 0);
  k[7] = 3, k[2] = 6, k[4] = 1;  // episode 9 examined, not stable
  const Dataset out = stable_release(tagged, examined, k);
  REQUIRE(out.num_episodes() == 3);
  // examination order; user_id = the position in D_stable; no seed
  const std::vector<std::size_t> from = {7, 2, 4};
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(out.user_id(i) == static_cast<std::int64_t>(i));
    CHECK(out.episode_seed(i) == -1);
    CHECK(out.episode_length(i) == static_cast<std::size_t>(k[from[i]]));
    CHECK(out.obs(out.episode_start(i), i)[0] == static_cast<float>(from[i]));
  }
  CHECK_FALSE(out.terminated(out.episode_start(0) + 2));  // cut: flags cleared
  CHECK(out.terminated(out.episode_start(1) + 5));        // whole episode keeps its flag
  CHECK(out.info().metadata_json.find("collect_seed") == std::string::npos);
  CHECK(out.info().metadata_json.find("population") == std::string::npos);
  out.validate("stable");
  // split_release (private D_unst) drops the source metadata too
  const auto parts = split_release(tagged, k);
  CHECK(parts.unstable.info().metadata_json.find("collect_seed") == std::string::npos);
}

TEST_CASE("the release's record is formal only for rollouts drawn inside the mechanism" *
          doctest::test_suite("unit")) {
  AgreeingExperts experts(4, 2);
  NoLaplace noise;
  DataReleaseParams p;
  p.epsilon1 = 5;
  p.delta1 = 1e-3;
  p.trajectories = 3;
  p.max_length = 10;
  const Dataset data = make_data(4, 2, 5, 2);
  p.source = "recorded";
  const auto rec = release_report(p, data_release(data, experts, p, noise), "os_entropy", false);
  CHECK_FALSE(rec.formal);
  CHECK(rec.details_json.find("recorded source") != std::string::npos);
  p.source = "policies";
  // the policies source examines exactly the T rollouts given, in order
  const Dataset rollouts = make_data(4, 1, 5, 2).subset(std::vector<std::size_t>{0, 1, 2});
  const auto res = data_release_rollouts(rollouts, experts, p, noise);
  CHECK(res.examined == std::vector<std::size_t>{0, 1, 2});
  const auto pol = release_report(p, res, "os_entropy", false);
  CHECK(pol.formal);
  CHECK(pol.details_json.find("policy") != std::string::npos);
  CHECK_FALSE(release_report(p, res, "seeded", true).formal);
  // T must be the number of rollouts
  CHECK_THROWS_AS(data_release_rollouts(make_data(4, 1, 5, 2), experts, p, noise), DataError);
}

TEST_CASE("expert rollouts draw the expert, the reset and the floor from the noise source" *
          doctest::test_suite("unit")) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "dprl_expert_rollouts_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  Rng rng(3);
  std::vector<fs::path> files;
  for (int i = 0; i < 3; ++i) {
    nn::Mlp actor(nn::MlpShape({4, 8, 2}, nn::Act::kTanh));
    nn::init_orthogonal(actor.shape(), actor.data(), rng, std::sqrt(2.0), 0.01);
    NnPolicy pol("cartpole", NnPolicy::Mode::kArgmax, actor, 2);
    files.push_back(dir / fmt::format("e{}.bin", i));
    pol.save(files.back());
  }
  ParamMap params;
  param_map_set(params, "max_episode_steps", {"30", "test"});
  auto make = [&] { return envs::make_env("cartpole", params); };
  auto a = privacy::make_seeded_noise(9, 1, 2, true);
  auto b = privacy::make_seeded_noise(9, 1, 2, true);
  auto c = privacy::make_seeded_noise(10, 1, 2, true);
  const Dataset da = draw_expert_rollouts(make, files, 40, 0.2, *a);
  const Dataset db = draw_expert_rollouts(make, files, 40, 0.2, *b);
  const Dataset dc = draw_expert_rollouts(make, files, 40, 0.2, *c);
  REQUIRE(da.num_episodes() == 40);
  CHECK(std::equal(da.observations().begin(), da.observations().end(), db.observations().begin(),
                   db.observations().end()));
  CHECK(da.observations()[0] != dc.observations()[0]);  // another stream, another reset state
  std::vector<int> per_expert(3, 0);
  for (std::size_t e = 0; e < da.num_episodes(); ++e) {
    CHECK(da.episode_seed(e) == -1);
    CHECK(da.episode_length(e) <= 30);
    ++per_expert.at(static_cast<std::size_t>(da.user_id(e)));
  }
  for (int n : per_expert) CHECK(n > 0);  // P(an expert never drawn) = 3 (2/3)^40 ~ 3e-7
  da.validate("rollouts");
  CHECK_THROWS_AS(draw_expert_rollouts(make, files, 0, 0.2, *a), ParamError);
  fs::remove_all(dir);
}
