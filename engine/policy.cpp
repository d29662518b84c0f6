#include "engine/policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/error.hpp"

namespace dprl {

std::int64_t Policy::act_discrete(std::span<const float>, std::span<const std::uint8_t>) {
  throw InvalidAction(fmt::format("policy '{}' has no discrete actions", name()));
}

void Policy::act_continuous(std::span<const float>, std::span<double>) {
  throw InvalidAction(fmt::format("policy '{}' has no continuous actions", name()));
}

std::int64_t RandomPolicy::act_discrete(std::span<const float>,
                                        std::span<const std::uint8_t> mask) {
  const auto n = static_cast<std::uint64_t>(spec_.action.n);
  if (!spec_.has_action_mask || mask.empty()) return static_cast<std::int64_t>(rng_.below(n));
  std::uint64_t allowed = 0;
  for (auto m : mask) allowed += m ? 1 : 0;
  if (allowed == 0) return static_cast<std::int64_t>(rng_.below(n));
  std::uint64_t k = rng_.below(allowed);
  for (std::size_t a = 0; a < mask.size(); ++a)
    if (mask[a] && k-- == 0) return static_cast<std::int64_t>(a);
  return 0;
}

void RandomPolicy::act_continuous(std::span<const float>, std::span<double> action) {
  for (std::size_t i = 0; i < action.size(); ++i) {
    const double lo = spec_.action.low[i], hi = spec_.action.high[i];
    action[i] = std::isfinite(lo) && std::isfinite(hi) ? rng_.uniform(lo, hi) : rng_.normal();
  }
}

EvalStats evaluate(Env& env, Policy& policy, int episodes, std::uint64_t seed, std::uint64_t round,
                   EpisodeObserver* observer) {
  const EnvSpec& spec = env.spec();
  std::vector<float> obs(spec.observation.dim());
  std::vector<std::uint8_t> mask(spec.action.is_discrete() ? spec.action.n : 0);
  std::vector<double> action(spec.action.is_discrete() ? 0 : spec.action.dim());
  EvalStats s;
  std::vector<double> returns;
  returns.reserve(static_cast<std::size_t>(std::max(episodes, 0)));
  double sum = 0, len_sum = 0;
  s.return_min = INFINITY;
  s.return_max = -INFINITY;
  for (int e = 0; e < episodes; ++e) {
    const std::uint64_t ep_seed = derive_seed(seed, Domain::kEval, round, e);
    env.reset(ep_seed, obs);
    policy.begin_episode(mix64(ep_seed));
    if (observer) observer->on_reset(env, e);
    double ret = 0;
    std::int64_t len = 0;
    for (;;) {
      StepResult r;
      if (spec.action.is_discrete()) {
        if (spec.has_action_mask) env.action_mask(mask);
        const auto a =
            policy.act_discrete(obs, spec.has_action_mask ? std::span<const std::uint8_t>(mask)
                                                          : std::span<const std::uint8_t>());
        r = env.step(a, obs);
      } else {
        policy.act_continuous(obs, action);
        r = env.step(std::span<const double>(action), obs);
      }
      ret += r.reward;
      ++len;
      const bool go_on = observer == nullptr || observer->on_step(env, e, len, r, ret);
      if (r.terminated || r.truncated || !go_on) break;
    }
    sum += ret;
    returns.push_back(ret);
    len_sum += static_cast<double>(len);
    s.return_min = std::min(s.return_min, ret);
    s.return_max = std::max(s.return_max, ret);
  }
  s.episodes = episodes;
  if (episodes > 0) {
    s.return_mean = sum / episodes;
    // two passes: no cancellation when returns are large and alike
    double ss = 0;
    for (double r : returns) ss += (r - s.return_mean) * (r - s.return_mean);
    s.return_std = std::sqrt(ss / episodes);
    s.length_mean = len_sum / episodes;
  }
  return s;
}

}  // namespace dprl
