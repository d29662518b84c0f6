#include "envs/linear_mdp.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"
#include "envs/chain_mdp.hpp"
#include "envs/env_util.hpp"

namespace dprl::envs {
namespace {

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }

void dirichlet(Rng& rng, double conc, std::span<double> out) {
  double sum = 0;
  for (double& x : out) sum += (x = rng.gamma(conc));
  if (!(sum > 0)) {  // every gamma underflowed (tiny concentrations): a uniform vertex
    std::fill(out.begin(), out.end(), 0.0);
    out[rng.below(out.size())] = 1.0;
    return;
  }
  for (double& x : out) x /= sum;
}

LinearMdpModel shape(int S, int A, int H, int d) {
  LinearMdpModel m;
  m.num_states = S;
  m.num_actions = A;
  m.horizon = H;
  m.dim = d;
  m.features.assign(sz(S) * A * d, 0.0);
  m.theta.assign(sz(H) * d, 0.0);
  m.mu.assign(sz(H) * d * S, 0.0);
  m.initial.assign(S, 0.0);
  m.initial[0] = 1.0;
  return m;
}

// mu_h(., i) ~ Dirichlet(conc) over the states and theta_h[i] ~ U[0, 1], for every h and i.
void random_mu_theta(LinearMdpModel& m, Rng& rng, double conc) {
  const int S = m.num_states, H = m.horizon, d = m.dim;
  std::vector<double> row(S);
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < d; ++i) {
      dirichlet(rng, conc, row);
      std::copy(row.begin(), row.end(), m.mu.begin() + (sz(h) * d + i) * S);
      m.theta[sz(h) * d + i] = rng.uniform();
    }
}

// Min et al. 2021 (section 7), used by Qiao and Wang 2023: S = {0, 1}, A = {0..99}, d = 10,
// phi(s, a) = (bits of a, delta(s, a), 1 - delta(s, a)) / 3 with delta(s, a) = [1{s = 0} = 1{a =
// 0}], mu_h(s') = 3 (0, .., 0, (1 - s') xor alpha_h, s' xor alpha_h), theta_h = 3 (0, .., 0, r, 1 -
// r), r = 0.99, alpha_h = 0, s_1 uniform. So P(s' = 0 | s, a) = delta(s, a) and r_h = 0.99 delta +
// 0.01 (1 - delta): the optimal action is a = 0 in state 0 and any a != 0 in state 1.
LinearMdpModel qiao_wang(int H) {
  constexpr int S = 2, A = 100, d = 10;
  constexpr double scale = 3.0;  // the largest ||phi|| before scaling: 8 ones and one indicator
  constexpr double r = 0.99;
  LinearMdpModel m = shape(S, A, H, d);
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < A; ++a) {
      double* f = m.features.data() + (sz(s) * A + a) * d;
      for (int b = 0; b < 8; ++b) f[b] = ((a >> b) & 1) / scale;
      const double delta = ((s == 0) == (a == 0)) ? 1.0 : 0.0;
      f[8] = delta / scale;
      f[9] = (1.0 - delta) / scale;
    }
  const int alpha = 0;
  for (int h = 0; h < H; ++h) {
    for (int sp = 0; sp < S; ++sp) {
      m.mu[(sz(h) * d + 8) * S + sp] = scale * ((1 - sp) ^ alpha);
      m.mu[(sz(h) * d + 9) * S + sp] = scale * (sp ^ alpha);
    }
    m.theta[sz(h) * d + 8] = scale * r;
    m.theta[sz(h) * d + 9] = scale * (1 - r);
  }
  m.initial.assign(S, 0.5);
  m.description = fmt::format("qiao_wang linear MDP (S 2, A 100, d 10, H {})", H);
  return m;
}

LinearMdpModel random_linear(const LinearMdpParams& p) {
  const int S = p.num_states, A = p.num_actions, H = p.horizon, d = p.dim;
  LinearMdpModel m = shape(S, A, H, d);
  Rng rng(derive_seed(static_cast<std::uint64_t>(p.model_seed), Domain::kEnvStep, 2002, 1));
  for (int sa = 0; sa < S * A; ++sa)
    dirichlet(rng, p.feature_conc, {m.features.data() + sz(sa) * d, sz(d)});
  random_mu_theta(m, rng, p.transition_conc);
  m.description =
      fmt::format("random linear MDP (S {}, A {}, d {}, H {}, seed {})", S, A, d, H, p.model_seed);
  return m;
}

LinearMdpModel tabular_random(const LinearMdpParams& p) {
  const int S = p.num_states, A = p.num_actions, H = p.horizon, d = S * A;
  if (sz(d) * S * H > (sz(1) << 28))
    throw ParamError(
        fmt::format("linear_mdp tabular: |S| {} x |A| {} is too large (d = {})", S, A, d));
  LinearMdpModel m = shape(S, A, H, d);
  Rng rng(derive_seed(static_cast<std::uint64_t>(p.model_seed), Domain::kEnvStep, 2002, 2));
  for (int sa = 0; sa < d; ++sa) m.features[sz(sa) * d + sa] = 1.0;
  random_mu_theta(m, rng, p.transition_conc);
  m.description = fmt::format("tabular MDP (S {}, A {}, H {}, seed {}), one-hot features", S, A, H,
                              p.model_seed);
  return m;
}

LinearMdpModel chain(const LinearMdpParams& p) {
  ChainMdpParams cp;
  cp.n = p.chain_n;
  cp.p = p.chain_p;
  const ChainMdp env(cp);
  const TabularModel& t = *env.tabular_model();
  const int S = t.num_states, A = t.num_actions, H = p.horizon, d = S * A;
  LinearMdpModel m = shape(S, A, H, d);
  for (int sa = 0; sa < d; ++sa) m.features[sz(sa) * d + sa] = 1.0;
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < A; ++a) {
      const int i = s * A + a;
      double r = 0;
      for (const auto& o : t.at(s, a)) r += o.prob * (o.reward + 1.0) / 2.0;
      for (int h = 0; h < H; ++h) {
        m.theta[sz(h) * d + i] = r;
        for (const auto& o : t.at(s, a)) m.mu[(sz(h) * d + i) * S + o.next_state] += o.prob;
      }
    }
  m.description = fmt::format("chain MDP (n {}, p {}, H {}), one-hot features, rewards (r + 1) / 2",
                              S, p.chain_p, H);
  return m;
}

}  // namespace

void LinearMdpModel::derive_from_linear() {
  const int S = num_states, A = num_actions, H = horizon, d = dim;
  rewards.assign(sz(H) * S * A, 0.0);
  transitions.assign(sz(H) * S * A * S, 0.0);
  for (int h = 0; h < H; ++h)
    for (int s = 0; s < S; ++s)
      for (int a = 0; a < A; ++a) {
        const auto f = phi(s, a);
        double r = 0;
        double* row = transitions.data() + ((sz(h) * S + s) * A + a) * S;
        for (int i = 0; i < d; ++i) {
          if (f[i] == 0) continue;
          r += f[i] * theta[sz(h) * d + i];
          const double* mu_i = mu.data() + (sz(h) * d + i) * S;
          for (int sp = 0; sp < S; ++sp) row[sp] += f[i] * mu_i[sp];
        }
        rewards[(sz(h) * S + s) * A + a] = r;
      }
}

void LinearMdpModel::validate() const {
  const int S = num_states, A = num_actions, H = horizon, d = dim;
  auto fail = [](const std::string& what) { throw ParamError("linear MDP model: " + what); };
  if (S < 1 || A < 1 || H < 1 || d < 1) fail("empty dimensions");
  if (features.size() != sz(S) * A * d || theta.size() != sz(H) * d || mu.size() != sz(H) * d * S ||
      rewards.size() != sz(H) * S * A || transitions.size() != sz(H) * S * A * S ||
      initial.size() != sz(S))
    fail("array sizes do not match (S, A, H, d)");
  double init_sum = 0;
  for (double x : initial) {
    if (!(x >= 0)) fail("initial distribution has a negative entry");
    init_sum += x;
  }
  if (std::abs(init_sum - 1) > 1e-9) fail("initial distribution does not sum to 1");
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < A; ++a) {
      double n2 = 0;
      for (double x : phi(s, a)) {
        if (!std::isfinite(x)) fail(fmt::format("phi({}, {}) is not finite", s, a));
        n2 += x * x;
      }
      if (std::sqrt(n2) > 1 + 1e-9)
        fail(fmt::format("||phi({}, {})|| = {} exceeds 1", s, a, std::sqrt(n2)));
    }
  for (int h = 0; h < H; ++h)
    for (int s = 0; s < S; ++s)
      for (int a = 0; a < A; ++a) {
        const auto f = phi(s, a);
        const double r = reward(h, s, a);
        if (!(r >= -1e-12 && r <= 1 + 1e-12))
          fail(fmt::format("r_{}({}, {}) = {} is outside [0, 1]", h + 1, s, a, r));
        double lin = 0;
        for (int i = 0; i < d; ++i) lin += f[i] * theta[sz(h) * d + i];
        if (std::abs(lin - r) > 1e-9)
          fail(fmt::format("r_{}({}, {}) is not phi^T theta", h + 1, s, a));
        const auto row = next(h, s, a);
        double sum = 0;
        for (int sp = 0; sp < S; ++sp) {
          if (!(row[sp] >= -1e-12))
            fail(fmt::format("P_{}(. | {}, {}) has a negative entry", h + 1, s, a));
          sum += row[sp];
          double l = 0;
          for (int i = 0; i < d; ++i) l += f[i] * mu[(sz(h) * d + i) * S + sp];
          if (std::abs(l - row[sp]) > 1e-9)
            fail(fmt::format("P_{}({} | {}, {}) is not phi^T mu", h + 1, sp, s, a));
        }
        if (std::abs(sum - 1) > 1e-9)
          fail(fmt::format("P_{}(. | {}, {}) sums to {}", h + 1, s, a, sum));
      }
}

LinearMdpModel make_linear_mdp(const LinearMdpParams& p) {
  LinearMdpModel m;
  if (p.kind == "qiao_wang")
    m = qiao_wang(p.horizon);
  else if (p.kind == "random")
    m = random_linear(p);
  else if (p.kind == "tabular")
    m = tabular_random(p);
  else if (p.kind == "chain")
    m = chain(p);
  else
    throw ParamError(fmt::format(
        "linear_mdp: kind '{}' is not one of qiao_wang, random, tabular, chain", p.kind));
  m.derive_from_linear();
  m.validate();
  return m;
}

MdpValues optimal_values(const LinearMdpModel& m, std::vector<std::int32_t>* greedy) {
  const int S = m.num_states, A = m.num_actions, H = m.horizon;
  MdpValues out;
  out.v.assign(sz(H + 1) * S, 0.0);
  out.q.assign(sz(H) * S * A, 0.0);
  if (greedy) greedy->assign(sz(H) * S, 0);
  for (int h = H - 1; h >= 0; --h) {
    const double* vn = out.v.data() + sz(h + 1) * S;
    for (int s = 0; s < S; ++s) {
      double best = -INFINITY;
      int arg = 0;
      for (int a = 0; a < A; ++a) {
        const auto row = m.next(h, s, a);
        double q = m.reward(h, s, a);
        for (int sp = 0; sp < S; ++sp) q += row[sp] * vn[sp];
        out.q[(sz(h) * S + s) * A + a] = q;
        if (q > best) {
          best = q;
          arg = a;
        }
      }
      out.v[sz(h) * S + s] = best;
      if (greedy) (*greedy)[sz(h) * S + s] = arg;
    }
  }
  return out;
}

std::vector<double> policy_values(const LinearMdpModel& m, std::span<const std::int32_t> pi) {
  const int S = m.num_states, A = m.num_actions, H = m.horizon;
  if (pi.size() != sz(H) * S)
    throw ParamError(
        fmt::format("policy_values: policy has {} entries, need H * S = {}", pi.size(), sz(H) * S));
  std::vector<double> v(sz(H + 1) * S, 0.0);
  for (int h = H - 1; h >= 0; --h) {
    const double* vn = v.data() + sz(h + 1) * S;
    for (int s = 0; s < S; ++s) {
      const int a = pi[sz(h) * S + s];
      if (a < 0 || a >= A)
        throw ParamError(fmt::format("policy_values: action {} at (h {}, s {}) is outside [0, {})",
                                     a, h + 1, s, A));
      const auto row = m.next(h, s, a);
      double q = m.reward(h, s, a);
      for (int sp = 0; sp < S; ++sp) q += row[sp] * vn[sp];
      v[sz(h) * S + s] = q;
    }
  }
  return v;
}

double initial_value(const LinearMdpModel& m, std::span<const double> v) {
  double out = 0;
  for (int s = 0; s < m.num_states; ++s) out += m.initial[s] * v[s];
  return out;
}

LinearMdp::LinearMdp(const Params& p) : p_(p) {
  validate_params(p_, "linear_mdp");
  model_ = make_linear_mdp(p_);
  spec_.id = "linear_mdp";
  spec_.observation = Space::discrete(model_.num_states);
  spec_.action = Space::discrete(model_.num_actions);
  spec_.max_episode_steps = p_.max_episode_steps > 0 ? p_.max_episode_steps : model_.horizon;
}

void LinearMdp::do_reset(std::uint64_t seed, std::span<float> obs) {
  rng_.seed_with(seed);
  s_ = static_cast<int>(rng_.categorical(model_.initial));
  obs[0] = static_cast<float>(s_);
}

StepResult LinearMdp::do_step(std::int64_t action, std::span<float> obs) {
  if (action < 0 || action >= model_.num_actions) [[unlikely]]
    throw_bad_discrete_action(spec_, action);
  StepResult r;
  // past the horizon the model has no step h: stay put with reward 0 (like an absorbing end)
  const int h = elapsed_steps();
  if (h < model_.horizon) {
    const int a = static_cast<int>(action);
    r.reward = model_.reward(h, s_, a);
    s_ = static_cast<int>(rng_.categorical(model_.next(h, s_, a)));
  }
  obs[0] = static_cast<float>(s_);
  return r;
}

void LinearMdp::do_set_state(std::span<const double> s) {
  s_ = static_cast<int>(check_index_state(spec_, s, model_.num_states));
}

void LinearMdp::do_sync_state(StateIo& io) {
  io.section("linear_mdp");
  io.bounded(s_, 0, model_.num_states - 1, "state");
  io(rng_);
}

}  // namespace dprl::envs
