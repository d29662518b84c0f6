// Conformance suite over every registered env and alias: observations stay in
// the space, truncation at the limit, reproducible resets, state round trips, no allocation in
// step, and typed errors for bad parameters, actions and states.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "envs/register_envs.hpp"

// every allocation in this test binary is counted, so "step allocates nothing" is checked exactly
namespace {
std::atomic<long> g_allocations{0};
}  // namespace

// GCC 12 flags free() in the replaced deletes once it inlines std::allocator into them
// (-Wmismatched-new-delete): a false positive, every allocation here is malloc's.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace {

using dprl::Env;
using dprl::ParamMap;
using dprl::Rng;
using dprl::StepResult;
using dprl::envs::env_registry;
using dprl::envs::make_env;

// every name a user can create: entries and Gymnasium aliases (one doctest subcase each, so a
// failing env does not hide the others)
std::vector<std::string> all_env_names() { return env_registry().all_names(); }

// steps env with a uniformly random valid action drawn from rng
StepResult random_step(Env& env, Rng& rng, std::span<float> obs, std::vector<double>& act) {
  const auto& a = env.spec().action;
  if (a.is_discrete()) return env.step(static_cast<std::int64_t>(rng.below(a.n)), obs);
  for (std::size_t k = 0; k < act.size(); ++k) act[k] = rng.uniform(a.low[k], a.high[k]);
  return env.step(std::span<const double>(act), obs);
}

struct Trace {
  std::vector<float> obs;
  std::vector<double> rewards;
  std::vector<int> flags;
  bool operator==(const Trace&) const = default;
};

// a reset from seed then n random steps (actions from action_seed), with auto-reset
Trace run(Env& env, std::uint64_t seed, std::uint64_t action_seed, int n) {
  Trace t;
  std::vector<float> obs(env.obs_dim());
  std::vector<double> act(env.spec().action.is_discrete() ? 0 : env.spec().action.dim());
  Rng rng(action_seed);
  env.reset(seed, obs);
  t.obs.insert(t.obs.end(), obs.begin(), obs.end());
  std::uint64_t episode = 0;
  for (int i = 0; i < n; ++i) {
    const StepResult r = random_step(env, rng, obs, act);
    t.obs.insert(t.obs.end(), obs.begin(), obs.end());
    t.rewards.push_back(r.reward);
    t.flags.push_back(r.terminated * 2 + r.truncated);
    if (r.terminated || r.truncated)
      env.reset(dprl::derive_seed(seed, dprl::Domain::kEnvReset, 0, ++episode), obs);
  }
  return t;
}

// "[1, 1000000000]" or "(0, inf)" -> values just outside the range
std::vector<std::string> out_of_range_texts(const std::string& range, bool is_int) {
  std::vector<std::string> out;
  if (range.size() < 5) return out;
  const auto comma = range.find(", ");
  const std::string lo = range.substr(1, comma - 1);
  const std::string hi = range.substr(comma + 2, range.size() - comma - 3);
  const bool lo_open = range.front() == '(';
  const bool hi_open = range.back() == ')';
  if (lo != "-inf") {
    const double v = std::stod(lo);
    out.push_back(lo_open ? lo : fmt::format("{}", is_int ? v - 1 : v - 1e-3 * (1 + std::fabs(v))));
  }
  if (hi != "inf") {
    const double v = std::stod(hi);
    out.push_back(hi_open ? hi : fmt::format("{}", is_int ? v + 1 : v + 1e-3 * (1 + std::fabs(v))));
  }
  return out;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("the registry lists the classic envs and their Gymnasium aliases") {
    for (const char* name : {"cartpole", "acrobot", "pendulum", "taxi", "chain_mdp", "CartPole-v1",
                             "CartPole-v0", "Acrobot-v1", "Pendulum-v1", "Taxi-v3", "MDP-100"})
      CHECK_MESSAGE(env_registry().contains(name), name);
    CHECK_THROWS_AS(make_env("no_such_env"), dprl::UnknownName);
  }

  TEST_CASE("every env: sane spec with observations in the space and finite rewards") {
    for (const auto& name : all_env_names()) SUBCASE(name.c_str()) {
        auto env = make_env(name);
        const auto& spec = env->spec();
        CHECK(spec.max_episode_steps > 0);
        CHECK(env->obs_dim() >= 1);
        CHECK(env_registry().find(spec.id) != nullptr);
        std::vector<float> obs(env->obs_dim());
        std::vector<double> act(spec.action.is_discrete() ? 0 : spec.action.dim());
        Rng rng(7);
        env->reset(1, obs);
        CHECK(spec.observation.contains(std::span<const float>(obs)));
        std::uint64_t episode = 1;
        int episodes = 0;
        for (int i = 0; i < 5000; ++i) {
          const StepResult r = random_step(*env, rng, obs, act);
          REQUIRE(spec.observation.contains(std::span<const float>(obs)));
          REQUIRE(std::isfinite(r.reward));
          if (r.terminated || r.truncated) {
            env->reset(++episode, obs);
            REQUIRE(spec.observation.contains(std::span<const float>(obs)));
            ++episodes;
          }
        }
        CHECK(episodes > 0);
      }
  }

  TEST_CASE("every env: truncated exactly on the step that reaches max_episode_steps") {
    for (const auto& name : all_env_names()) SUBCASE(name.c_str()) {
        const int limit = 5;
        auto env = make_env(name, {{"max_episode_steps", {std::to_string(limit), "test"}}});
        CHECK(env->spec().max_episode_steps == limit);
        std::vector<float> obs(env->obs_dim());
        std::vector<double> act(env->spec().action.is_discrete() ? 0 : env->spec().action.dim());
        Rng rng(11);
        int truncations = 0;
        for (std::uint64_t episode = 0; episode < 20; ++episode) {
          env->reset(episode, obs);
          CHECK(env->elapsed_steps() == 0);
          for (int t = 1; t <= limit; ++t) {
            const StepResult r = random_step(*env, rng, obs, act);
            REQUIRE(env->elapsed_steps() == t);
            REQUIRE(r.truncated == (t == limit));
            if (r.terminated) break;
            truncations += r.truncated;
          }
        }
        CHECK(truncations > 0);
      }
  }

  TEST_CASE("every env: a restored snapshot keeps the step counter and truncates on time") {
    for (const auto& name : all_env_names()) SUBCASE(name.c_str()) {
        const int limit = 10, before = 4;
        const ParamMap p{{"max_episode_steps", {std::to_string(limit), "test"}}};
        auto a = make_env(name, p);
        auto b = make_env(name, p);
        std::vector<float> obs(a->obs_dim());
        std::vector<double> act(a->spec().action.is_discrete() ? 0 : a->spec().action.dim());
        // an episode that has not terminated after `before` steps
        Rng rng(21);
        bool live = false;
        for (std::uint64_t seed = 0; seed < 50 && !live; ++seed) {
          a->reset(seed, obs);
          live = true;
          for (int t = 0; t < before && live; ++t) live = !random_step(*a, rng, obs, act).terminated;
        }
        REQUIRE(live);
        REQUIRE(a->elapsed_steps() == before);
        b->reset(99, obs);
        b->restore(a->snapshot());
        CHECK(b->elapsed_steps() == before);
        for (int t = before + 1; t <= limit; ++t) {
          const StepResult r = random_step(*b, rng, obs, act);
          REQUIRE(b->elapsed_steps() == t);
          REQUIRE(r.truncated == (t == limit));
          if (r.terminated) break;
        }
      }
  }

  TEST_CASE("every env: a wrong-size observation buffer throws and is left alone") {
    for (const auto& name : all_env_names()) SUBCASE(name.c_str()) {
        auto env = make_env(name);
        const std::size_t dim = env->obs_dim();
        std::vector<float> obs(dim);
        std::vector<double> act(env->spec().action.is_discrete() ? 0 : env->spec().action.dim());
        Rng rng(4);
        env->reset(1, obs);
        random_step(*env, rng, obs, act);
        const std::vector<double> state = env->state();
        std::vector<float> buf(dim + 3, 777.0f);
        for (std::size_t size : {std::size_t{0}, dim - 1, dim + 1}) {
          CAPTURE(size);
          const std::span<float> wrong(buf.data(), size);
          const auto expect_refused = [&](const auto& call) {
            try {
              call();
              FAIL("no error");
            } catch (const dprl::InvalidAction&) {
              FAIL("InvalidAction for a valid action");
            } catch (const dprl::Error& e) {
              const std::string what = e.what();
              CHECK(what.find(env->spec().id) != std::string::npos);
              CHECK(what.find(fmt::format("holds {} floats", size)) != std::string::npos);
              CHECK(what.find(fmt::format("needs {}", dim)) != std::string::npos);
            }
          };
          expect_refused([&] { env->reset(2, wrong); });
          if (env->spec().action.is_discrete()) {
            expect_refused([&] { env->step(std::int64_t{0}, wrong); });
          } else {
            expect_refused([&] { env->step(std::span<const double>(act), wrong); });
          }
          CHECK(env->elapsed_steps() == 1);
          CHECK(env->state() == state);
          CHECK(buf == std::vector<float>(dim + 3, 777.0f));
        }
      }
  }

  TEST_CASE("every env: the same seed gives the same episode and other seeds other ones") {
    for (const auto& name : all_env_names()) SUBCASE(name.c_str()) {
        auto a = make_env(name);
        auto b = make_env(name);
        CHECK(run(*a, 42, 5, 700) == run(*b, 42, 5, 700));
        // a used env resets to the same start as a fresh one
        CHECK(run(*a, 42, 5, 50) == run(*b, 42, 5, 50));
        // other seeds give other episodes, unless the env starts deterministically (HIV, chain)
        std::vector<float> o1(a->obs_dim()), o2(a->obs_dim());
        bool fixed_start = true;
        for (std::uint64_t seed = 1; seed < 10 && fixed_start; ++seed) {
          a->reset(0, o1);
          b->reset(seed, o2);
          fixed_start = o1 == o2 && a->state() == b->state();
        }
        if (!fixed_start) CHECK(!(run(*a, 42, 5, 700) == run(*a, 43, 5, 700)));
      }
  }

  TEST_CASE("every env: state() / set_state() round trip and restart the step counter") {
    for (const auto& name : all_env_names()) SUBCASE(name.c_str()) {
        auto a = make_env(name);
        auto b = make_env(name);
        std::vector<float> obs_a(a->obs_dim()), obs_b(b->obs_dim());
        std::vector<double> act(a->spec().action.is_discrete() ? 0 : a->spec().action.dim());
        Rng rng(3);
        a->reset(9, obs_a);
        for (int i = 0; i < 3; ++i) {
          if (random_step(*a, rng, obs_a, act).terminated) a->reset(10 + i, obs_a);
        }
        const std::vector<double> s = a->state();
        // two envs reset with the same seed and put into s continue identically
        a->reset(77, obs_a);
        b->reset(77, obs_b);
        a->set_state(s);
        b->set_state(s);
        CHECK(a->state() == s);
        CHECK(a->elapsed_steps() == 0);
        Rng ra(5), rb(5);
        for (int i = 0; i < 40; ++i) {
          const StepResult r1 = random_step(*a, ra, obs_a, act);
          const StepResult r2 = random_step(*b, rb, obs_b, act);
          REQUIRE(obs_a == obs_b);
          REQUIRE(r1.reward == r2.reward);
          REQUIRE(r1.terminated == r2.terminated);
          if (r1.terminated || r1.truncated) break;
        }
        CHECK(a->state() == b->state());
      }
  }

  TEST_CASE("every env: snapshot() / restore() continue an episode mid-way exactly") {
    for (const auto& name : all_env_names()) SUBCASE(name.c_str()) {
        auto a = make_env(name);
        auto b = make_env(name);
        std::vector<float> obs_a(a->obs_dim()), obs_b(b->obs_dim());
        std::vector<double> act(a->spec().action.is_discrete() ? 0 : a->spec().action.dim());
        // mid-episode: far enough in that truncation, RNG and counters all matter
        Rng rng(3);
        a->reset(9, obs_a);
        std::uint64_t episode = 0;
        const auto step_a = [&](Rng& r) {
          const StepResult res = random_step(*a, r, obs_a, act);
          if (res.terminated || res.truncated) a->reset(100 + episode++, obs_a);
          return res;
        };
        for (int i = 0; i < 37; ++i) step_a(rng);
        const std::string snap = a->snapshot();
        const std::vector<float> obs_at_snap = obs_a;
        const int elapsed = a->elapsed_steps();
        // b has its own history; restored, it continues as a does
        b->reset(77, obs_b);
        b->restore(snap);
        CHECK(b->elapsed_steps() == elapsed);
        CHECK(b->state() == a->state());
        CHECK(b->snapshot() == snap);
        obs_b = obs_at_snap;
        Rng ra(5), rb(5);
        for (int i = 0; i < 1200; ++i) {
          const StepResult r1 = random_step(*a, ra, obs_a, act);
          const StepResult r2 = random_step(*b, rb, obs_b, act);
          REQUIRE(obs_a == obs_b);
          REQUIRE(r1.reward == r2.reward);
          REQUIRE(r1.terminated == r2.terminated);
          REQUIRE(r1.truncated == r2.truncated);
          if (r1.terminated || r1.truncated) {  // the next episodes too
            a->reset(500 + i, obs_a);
            b->reset(500 + i, obs_b);
          }
        }
        // a snapshot of another env, or cut short, is refused
        CHECK_THROWS_AS(b->restore(snap.substr(0, snap.size() / 2)), dprl::DataError);
        CHECK_THROWS_AS(b->restore("xx"), dprl::DataError);
      }
  }

  TEST_CASE("every env: step and reset and action_mask allocate nothing") {
    for (const auto& name : all_env_names()) SUBCASE(name.c_str()) {
        auto env = make_env(name);
        std::vector<float> obs(env->obs_dim());
        std::vector<double> act(env->spec().action.is_discrete() ? 0 : env->spec().action.dim());
        std::vector<std::uint8_t> mask(env->spec().action.is_discrete() ? env->spec().action.n : 1);
        Rng rng(1);
        env->reset(1, obs);
        const long before = g_allocations.load();
        std::uint64_t episode = 1;
        for (int i = 0; i < 3000; ++i) {
          const StepResult r = random_step(*env, rng, obs, act);
          if (env->spec().has_action_mask) env->action_mask(mask);
          if (r.terminated || r.truncated) env->reset(++episode, obs);
        }
        CHECK(g_allocations.load() - before == 0);
      }
  }

  TEST_CASE("every env: bad parameters throw ParamError") {
    for (const auto& entry : env_registry().entries()) SUBCASE(entry.name.c_str()) {
        CHECK_THROWS_AS(make_env(entry.name, {{"no_such_param", {"1", "test"}}}), dprl::ParamError);
        for (const auto& info : entry.describe()) {
          CAPTURE(info.name);
          std::vector<std::string> bad;
          if (info.type == "float" || info.type == "int") {
            bad = out_of_range_texts(info.range, info.type == "int");
            bad.push_back("nan");
            bad.push_back("abc");
            if (info.type == "int") bad.push_back("1.5");
          } else if (info.type == "bool") {
            bad = {"maybe", "2"};
          } else if (!info.range.empty()) {
            bad = {"no_such_choice"};
          }
          for (const auto& text : bad) {
            CAPTURE(text);
            CHECK_THROWS_AS(make_env(entry.name, {{info.name, {text, "test"}}}), dprl::ParamError);
          }
        }
      }
  }

  TEST_CASE("every env: params() lists every parameter and rebuilds the same env") {
    for (const auto& name : all_env_names()) SUBCASE(name.c_str()) {
        auto env = make_env(name);
        const ParamMap p = env->params();
        auto [entry, merged] = env_registry().resolve(name, {});
        CHECK(p.size() == entry->describe().size());
        auto again = make_env(env->spec().id, p);
        const ParamMap q = again->params();
        REQUIRE(q.size() == p.size());
        for (std::size_t i = 0; i < p.size(); ++i) {
          CHECK(q[i].first == p[i].first);
          CHECK(q[i].second.text == p[i].second.text);
        }
        CHECK(again->spec().max_episode_steps == env->spec().max_episode_steps);
      }
  }

  TEST_CASE("every env: invalid actions throw InvalidAction") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (const auto& name : all_env_names()) SUBCASE(name.c_str()) {
        auto env = make_env(name);
        const auto& spec = env->spec();
        std::vector<float> obs(env->obs_dim());
        env->reset(0, obs);
        if (spec.action.is_discrete()) {
          CHECK_THROWS_AS(env->step(-1, obs), dprl::InvalidAction);
          CHECK_THROWS_AS(env->step(spec.action.n, obs), dprl::InvalidAction);
          const std::vector<double> cont{0.0};
          CHECK_THROWS_AS(env->step(std::span<const double>(cont), obs), dprl::InvalidAction);
          CHECK(env->elapsed_steps() == 0);
        } else {
          std::vector<double> a(spec.action.dim(), 0.0);
          a[0] = nan;
          CHECK_THROWS_AS(env->step(std::span<const double>(a), obs), dprl::InvalidAction);
          std::vector<double> wrong(spec.action.dim() + 1, 0.0);
          CHECK_THROWS_AS(env->step(std::span<const double>(wrong), obs), dprl::InvalidAction);
          CHECK_THROWS_AS(env->step(std::int64_t{0}, obs), dprl::InvalidAction);
          CHECK(env->elapsed_steps() == 0);
        }
      }
  }

  TEST_CASE("every env: invalid states throw ParamError") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (const auto& name : all_env_names()) SUBCASE(name.c_str()) {
        auto env = make_env(name);
        std::vector<float> obs(env->obs_dim());
        env->reset(0, obs);
        std::vector<double> s = env->state();
        std::vector<double> longer = s;
        longer.push_back(0);
        CHECK_THROWS_AS(env->set_state(longer), dprl::ParamError);
        CHECK_THROWS_AS(env->set_state(std::vector<double>{}), dprl::ParamError);
        std::vector<double> bad = s;
        bad[0] = nan;
        CHECK_THROWS_AS(env->set_state(bad), dprl::ParamError);
        bad[0] = std::numeric_limits<double>::infinity();
        CHECK_THROWS_AS(env->set_state(bad), dprl::ParamError);
        if (const auto* m = env->tabular_model()) {
          CHECK_THROWS_AS(env->set_state(std::vector<double>{-1.0}), dprl::ParamError);
          CHECK_THROWS_AS(env->set_state(std::vector<double>{double(m->num_states)}),
                          dprl::ParamError);
          CHECK_THROWS_AS(env->set_state(std::vector<double>{0.5}), dprl::ParamError);
        }
        CHECK(env->state() == s);
      }
  }

  TEST_CASE("every tabular env: the model is a distribution and agrees with step") {
    for (const auto& name : all_env_names()) SUBCASE(name.c_str()) {
        auto env = make_env(name);
        const auto* m = env->tabular_model();
        if (!m) continue;
        REQUIRE(m->num_states == env->spec().observation.n);
        REQUIRE(m->num_actions == env->spec().action.n);
        REQUIRE(m->offset.size() == std::size_t(m->num_states) * m->num_actions + 1);
        double init = 0;
        for (double w : m->initial) init += w;
        CHECK(init == doctest::Approx(1.0).epsilon(1e-12));
        std::vector<float> obs(1);
        for (int s = 0; s < m->num_states; ++s) {
          for (int a = 0; a < m->num_actions; ++a) {
            double total = 0;
            for (const auto& o : m->at(s, a)) {
              REQUIRE(o.next_state >= 0);
              REQUIRE(o.next_state < m->num_states);
              REQUIRE(o.prob > 0);
              total += o.prob;
            }
            REQUIRE(total == doctest::Approx(1.0).epsilon(1e-12));
            // one step from s lands on one of the outcomes, with its reward and terminal flag
            env->reset(std::uint64_t(s * 7 + a), obs);
            env->set_state(std::vector<double>{double(s)});
            const StepResult r = env->step(a, obs);
            bool found = false;
            for (const auto& o : m->at(s, a))
              found = found || (o.next_state == int(obs[0]) && o.reward == r.reward &&
                                o.terminal == r.terminated);
            REQUIRE_MESSAGE(found, "s=" << s << " a=" << a);
          }
        }
      }
  }

}  // TEST_SUITE
