#include "engine/vec_env.hpp"

#include <doctest/doctest.h>

#include <vector>

namespace {

// A counter env: observation = steps taken, terminates after `len` steps where len depends on the
// episode seed, reward = action.
class CountEnv final : public dprl::Env {
 public:
  CountEnv() {
    spec_.id = "count";
    spec_.observation = dprl::Space::box(1, 0, 100);
    spec_.action = dprl::Space::discrete(3);
    spec_.max_episode_steps = 100;
  }
  std::vector<double> state() const override { return {static_cast<double>(t_)}; }
  dprl::ParamMap params() const override { return {}; }

 private:
  friend class dprl::Env;  // Env::step_as
  void do_reset(std::uint64_t seed, std::span<float> obs) override {
    t_ = 0;
    len_ = 2 + static_cast<int>(seed % 4);
    obs[0] = 0;
  }
  dprl::StepResult do_step(std::int64_t a, std::span<float> obs) override {
    ++t_;
    obs[0] = static_cast<float>(t_);
    return {static_cast<double>(a), t_ >= len_, false};
  }
  void do_set_state(std::span<const double> s) override { t_ = static_cast<int>(s[0]); }

  int t_ = 0, len_ = 0;
};

std::vector<double> run(int n, std::uint64_t seed, int steps) {
  std::vector<std::unique_ptr<CountEnv>> envs;
  for (int i = 0; i < n; ++i) envs.push_back(std::make_unique<CountEnv>());
  dprl::VecEnv<CountEnv> v(std::move(envs), seed);
  v.reset();
  std::vector<int> actions(n, 1);
  std::vector<double> slot0_returns;
  for (int s = 0; s < steps; ++s) {
    v.step(std::span<const int>(actions));
    for (const auto& f : v.finished()) {
      CHECK(f.length == static_cast<std::int64_t>(f.ret));
      CHECK(v.final_obs(f.slot)[0] == static_cast<float>(f.length));
      CHECK(v.obs()[f.slot] == 0.0f);  // auto-reset happened on the same step
      if (f.slot == 0) slot0_returns.push_back(f.ret);
    }
  }
  CHECK(v.total_steps() == static_cast<std::int64_t>(n) * steps);
  return slot0_returns;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("vec env auto-resets and slot streams do not depend on the number of slots") {
    const auto a = run(1, 9, 200);
    const auto b = run(4, 9, 200);
    CHECK(a.size() > 10);
    CHECK(a == b);
    CHECK(run(1, 10, 200) != a);
  }
}
