// dprl bench offline: the time of one gradient step of an offline learner, private and not.
//
// The workload: the learner's networks for --obs inputs and --actions actions (hidden widths
// --hidden, default 256,256), a fixed random batch (observations N(0, 1), uniform actions, rewards
// N(0, 1), 10% terminals, from seed 0), and one full step: forward passes (Q(s), Q(s') and the
// target at s' for the Q-learners), the loss's output gradients, backward, Adam and the target
// update. dp_step_us is one user-level DP-SGD step on the same columns as --batch sampled users
// (one transition each): the same forward and backward, joint per-user norms, clip factors, the
// weighted sums, Gaussian noise on every parameter (--noise seeded: the seeded NoiseSource's fast
// bulk sampler, the default; --noise os-entropy: the secure exact sampler private runs use) and
// Adam. Figures are medians of
// --repeats timed blocks of --iters steps on one thread (the two kinds interleaved block by block);
// step_us and dp_step_us are thread CPU time, which a loaded machine inflates less than wall time
// (also printed). --noise-threads 1 gives the DP step a helper thread, as private runs have by
// default (train.noise_threads): it draws the next step's noise while the step runs and computes
// half of each large layer's weight-gradient product; its time is then outside the thread CPU time, and
// the wall times (dp_step_wall_us against step_wall_us) are the figure to read. step_gflops is the step's matrix-product arithmetic (nn::matmul_flops over one step:
// every forward pass, backward errors and weight gradients) over its thread CPU time, and
// dp_step_gflops the same for the DP step (whose weight gradients are in float chunks or, with
// --sum double or above the allowance, in double; user_dp_sgd.hpp); gemm_gflops is
// Eigen's float GEMM on 512 x 512 matrices on this core, the practical peak they are compared
// with.
// tools/bench/offline_pytorch.py times the same CQL step in PyTorch.
#include <Eigen/Core>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algos/core/algorithm.hpp"
#include "algos/core/networks.hpp"
#include "algos/offline/offline_learner.hpp"
#include "engine/error.hpp"
#include "engine/limits.hpp"
#include "engine/nn/nn_mlp.hpp"
#include "engine/rng.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/prefetched_release.hpp"
#include "privacy/secure_release.hpp"
#include "tools/cli.hpp"
#include "tools/cli_util.hpp"

namespace dprl::cli {
namespace {

struct BenchOfflineOpts {
  std::string algo = "discrete_cql";
  int obs = 8;
  int actions = 4;
  int batch = 256;
  std::string hidden = "256,256";
  int iters = 200;
  int repeats = 7;
  std::string noise = "seeded";
  int noise_threads = 0;
  std::string sum = "auto";
  bool json = false;
};

algos::OfflineBatch random_batch(int obs, int actions, int n) {
  algos::OfflineBatch b;
  Rng rng(derive_seed(0, Domain::kAlgo, 7));
  b.obs.resize(obs, n);
  b.next_obs.resize(obs, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < obs; ++j) {
      b.obs(j, i) = static_cast<float>(rng.normal());
      b.next_obs(j, i) = static_cast<float>(rng.normal());
    }
  for (int i = 0; i < n; ++i) {
    b.actions.push_back(static_cast<int>(rng.below(static_cast<std::uint64_t>(actions))));
    b.rewards.push_back(static_cast<float>(rng.normal()));
    b.not_done.push_back(rng.uniform() < 0.1 ? 0.0f : 1.0f);
  }
  b.n = n;
  b.users = n;
  return b;
}

double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

struct Times {
  std::vector<double> cpu, wall;  // per-step microseconds of each timed block
};

// One timed block of iters calls (after a warm-up on the first block).
template <class F>
void time_block(int iters, bool warm, Times& t, F&& f) {
  if (warm)
    for (int i = 0; i < std::max(10, iters / 4); ++i) f();
  const double c0 = thread_cpu_us();
  const auto w0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) f();
  t.wall.push_back(
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - w0).count() /
      iters);
  t.cpu.push_back((thread_cpu_us() - c0) / iters);
}

// Eigen's float GEMM of two 512 x 512 matrices, GFLOP/s on this thread (median of 7).
double gemm_gflops() {
  constexpr int kN = 512;
  const Eigen::MatrixXf a = Eigen::MatrixXf::Random(kN, kN), b = Eigen::MatrixXf::Random(kN, kN);
  Eigen::MatrixXf c(kN, kN);
  Times t;
  for (int r = 0; r < 7; ++r) time_block(3, r == 0, t, [&] { c.noalias() = a * b; });
  return 2.0 * kN * kN * kN / (median(t.cpu) * 1e3);
}

std::unique_ptr<algos::OfflineLearner> make_learner(const BenchOfflineOpts& o, bool dp) {
  ParamMap params = {{"hidden_sizes", {o.hidden, "--hidden"}},
                     {"batch_size", {std::to_string(o.batch), "--batch"}}};
  if (dp) {
    params.push_back({"dp", {"true", ""}});
    params.push_back({"epsilon", {"1", ""}});
    params.push_back({"noise", {"seeded", ""}});
  }
  auto algo = algos::algo_registry().make(o.algo, params);
  auto* learner = dynamic_cast<algos::OfflineLearner*>(algo.get());
  if (!learner)
    throw ParamError(
        fmt::format("--algo {}: not an offline learner (bc, discrete_cql, "
                    "discrete_bcq)",
                    o.algo));
  algo.release();
  std::unique_ptr<algos::OfflineLearner> out(learner);
  out->setup(o.obs, o.actions, 1);
  return out;
}

void cmd_bench_offline(const BenchOfflineOpts& o) {
  if (o.obs < 1 || o.actions < 2) throw ParamError("--obs must be >= 1 and --actions >= 2");
  // the batch (observations and successors, float32) and its activations, before allocating
  check_memory(fmt::format("--batch {} x --obs {}", o.batch, o.obs), 2.0 * 4.0 * o.batch * o.obs);
  algos::parse_hidden_sizes(o.hidden, (o.algo + ".hidden_sizes").c_str(), o.batch, "--batch");
  const algos::OfflineBatch b = random_batch(o.obs, o.actions, o.batch);
  auto plain = make_learner(o, false);
  auto priv = make_learner(o, true);
  privacy::UserDpSgdConfig cfg;
  cfg.noise_multiplier = 1.0;
  cfg.clip_norm = 1.0;
  cfg.expected_batch = o.batch;
  cfg.num_users = 100 * static_cast<std::int64_t>(o.batch);
  cfg.float_sums = o.sum == "auto";
  cfg.validate();
  auto noise =
      o.noise == "seeded" ? privacy::make_seeded_noise(0, 0) : privacy::make_os_entropy_noise(true);
  // the release of a private run: seeded noise as drawn, OS-entropy noise through the secure
  // snapped release with its covering noise scale (privacy/secure_release.hpp)
  std::size_t values = 0;
  for (const auto& t : priv->trained_nets())
    for (int l = 0; l < t.net->shape().num_layers(); ++l)
      values += static_cast<std::size_t>(t.net->shape().out(l)) * (t.net->shape().in(l) + 1);
  const privacy::SecurePlan plan = privacy::gaussian_release_plan(
      cfg.noise_multiplier * cfg.clip_norm, cfg.clip_norm, values, noise->secure());
  const double sd = plan.scale;
  const std::unique_ptr<HelperThread> helper = privacy::make_noise_helper(o.noise_threads);
  privacy::PrefetchedGaussianRelease noised(*noise, values, sd, plan.grid, helper.get());
  const privacy::GaussianRelease release = [&](std::span<double> x, double) { noised(x); };
  // interleave the two measurements so both see the same machine state
  Times step, dp_step;
  for (int r = 0; r < o.repeats; ++r) {
    time_block(o.iters, r == 0, step, [&] { plain->step(b); });
    time_block(o.iters, r == 0, dp_step,
               [&] { priv->dp_step(b, cfg, sd, release, helper.get()); });
  }
  const double s = median(step.cpu), d = median(dp_step.cpu);
  std::size_t params = 0;
  for (const auto& t : plain->trained_nets()) params += t.net->size();
  // the flops of one step of each kind
  const auto flops_of = [](auto&& f) {
    const std::uint64_t f0 = nn::matmul_flops();
    f();
    return static_cast<double>(nn::matmul_flops() - f0);
  };
  const double step_flops = flops_of([&] { plain->step(b); });
  const double dp_flops = flops_of([&] { priv->dp_step(b, cfg, sd, release, helper.get()); });
  const double step_gflops = step_flops / (s * 1e3), dp_gflops = dp_flops / (d * 1e3);
  const double gemm = gemm_gflops();
  if (o.json) {
    nlohmann::ordered_json j;
    j["algo"] = o.algo;
    j["obs"] = o.obs;
    j["actions"] = o.actions;
    j["hidden"] = o.hidden;
    j["batch"] = o.batch;
    j["step_us"] = s;
    j["dp_step_us"] = d;
    j["dp_over_step"] = d / s;
    j["step_wall_us"] = median(step.wall);
    j["dp_step_wall_us"] = median(dp_step.wall);
    j["clock"] = "thread CPU time (step_us, dp_step_us); steady clock (*_wall_us)";
    j["trained_floats"] = params;
    j["repeats"] = o.repeats;
    j["iters"] = o.iters;
    j["threads"] = 1;
    j["noise_threads"] = o.noise_threads;
    j["step_gflops"] = step_gflops;
    j["dp_step_gflops"] = dp_gflops;
    j["gemm_gflops"] = gemm;
    j["step_share_of_gemm"] = step_gflops / gemm;
    j["noise"] = noise->name();
    j["sum_arithmetic"] = cfg.uses_float_sums() ? "float chunks" : "double";
    j["rounding_allowance"] = cfg.accumulation_error();
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print(
        "{} obs {} actions {} hidden {} batch {}: step {:.1f} us, DP step {:.1f} us ({:.2f}x) "
        "(thread CPU time; wall {:.1f} and {:.1f} us, {:.2f}x, noise threads {}); step {:.1f} "
        "GFLOP/s, {:.0f}% of the {:.1f} GFLOP/s of a float GEMM\n",
        o.algo, o.obs, o.actions, o.hidden, o.batch, s, d, d / s, median(step.wall),
        median(dp_step.wall), median(dp_step.wall) / median(step.wall), o.noise_threads,
        step_gflops, 100.0 * step_gflops / gemm, gemm);
  }
}

}  // namespace

void add_bench_offline_command(CLI::App& app) {
  CLI::App* bench = app.get_subcommand("bench");
  auto o = std::make_shared<BenchOfflineOpts>();
  auto* cmd = bench->add_subcommand(
      "offline", "offline learner gradient step and user-level DP-SGD step times (medians)");
  cmd->add_option("--algo", o->algo, "bc, discrete_cql (default) or discrete_bcq");
  cmd->add_option("--obs", o->obs, "observation size (default 8)")->check(CLI::Range(1, 65536));
  cmd->add_option("--actions", o->actions, "actions (default 4)")->check(CLI::Range(2, 65536));
  cmd->add_option("--batch", o->batch, "batch size (default 256)")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--hidden", o->hidden, "hidden widths (default 256,256)");
  cmd->add_option("--iters", o->iters, "steps per timed block (default 200)")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--repeats", o->repeats, "timed blocks (default 7)")->check(CLI::Range(1, 1000));
  cmd->add_option("--noise", o->noise, "DP noise: seeded (default) or os-entropy (secure)")
      ->check(CLI::IsMember({"seeded", "os-entropy"}));
  cmd->add_option("--noise-threads", o->noise_threads,
                  "0 (default): noise drawn at each release; 1: drawn ahead on a worker thread")
      ->check(CLI::Range(0, 1));
  cmd->add_option("--sum", o->sum,
                  "clipped sum: auto (default: float chunks when the allowance permits, as private "
                  "runs) or double")
      ->check(CLI::IsMember({"auto", "double"}));
  cmd->add_flag("--json", o->json, "print JSON");
  cmd->callback([o] { cmd_bench_offline(*o); });
}

}  // namespace dprl::cli
