#include "algos/lsvi_ucb.hpp"

#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <cmath>
#include <vector>

#include "engine/error.hpp"
#include "envs/linear_mdp.hpp"

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
