// An offline learner used as a plain C++ object, without the experiment runner: collect a dataset
// from an env, construct Behaviour Cloning directly, train it and evaluate its greedy policy.
#include <cstdio>
#include <dprl/algos/core/collect.hpp>
#include <dprl/algos/offline/bc.hpp>
#include <dprl/engine/policy.hpp>
#include <dprl/envs/register_envs.hpp>
#include <memory>

int main() {
  auto env = dprl::envs::make_env("cartpole");
  dprl::RandomPolicy random(env->spec());
  dprl::algos::CollectParams cp;
  cp.episodes = 20;
  cp.seed = 1;
  auto data = std::make_shared<dprl::Dataset>(dprl::algos::collect(*env, random, "random", cp));

  dprl::algos::BcParams params;
  params.common.hidden_sizes = "32,32";
  dprl::algos::Bc bc(params);  // the learner class itself (its networks live in this program)

  dprl::algos::TrainParams train;
  train.steps = 300;  // offline learners count gradient steps
  train.eval_every = 0;
  train.eval_episodes = 5;
  train.checkpoint = false;
  // no run directory and no progress display: nothing is written
  dprl::algos::TrainContext ctx([] { return dprl::envs::make_env("cartpole"); }, /*seed=*/1, train,
                                /*run_dir=*/nullptr, /*progress=*/nullptr);
  ctx.set_dataset(data, "collected in memory");
  const std::int64_t steps = bc.train(ctx).gradient_steps;

  auto policy = bc.policy();
  const dprl::EvalStats stats = dprl::evaluate(*env, *policy, 5, /*seed=*/2);
  std::printf("bc: %lld gradient steps on %zu transitions, return %.1f\n",
              static_cast<long long>(steps), data->num_transitions(), stats.return_mean);
  return steps == 300 && stats.return_mean > 0 ? 0 : 1;
}
