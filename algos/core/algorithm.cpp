#include "algos/core/algorithm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"
#include "privacy/prefetched_release.hpp"

namespace dprl::algos {

int TrainParams::resolved_noise_threads() const {
  return noise_threads < 0 ? privacy::default_noise_threads() : noise_threads;
}

TrainContext::TrainContext(std::function<std::unique_ptr<Env>()> make_env, std::uint64_t seed,
                           TrainParams train, RunDir* run_dir, Progress* progress)
    : make_env_(std::move(make_env)),
      seed_(seed),
      train_(train),
      run_dir_(run_dir),
      progress_(progress ? progress : &quiet_),
      epsilon_(NAN) {
  next_eval_ = train_.eval_every > 0 ? train_.eval_every : train_.steps;
}

bool TrainContext::eval_due(std::int64_t step) const {
  if (stop_now()) throw RunStopped(step);
  return step >= next_eval_;
}

EvalStats TrainContext::evaluate(Policy& policy, std::int64_t step, std::int64_t episodes,
                                 const std::vector<std::pair<std::string, double>>& extra) {
  if (!eval_env_) eval_env_ = make_env_();
  last_eval_ = dprl::evaluate(*eval_env_, policy, train_.eval_episodes, seed_, rounds_);
  last_eval_step_ = step;
  ++rounds_;
  // the first multiple of the interval past the step (in one step: a learner that evaluates only
  // at its end, such as lsvi_ucb, leaves next_eval_ far behind)
  const std::int64_t gap = train_.eval_every > 0 ? train_.eval_every : train_.steps;
  if (next_eval_ <= step) next_eval_ += ((step - next_eval_) / gap + 1) * gap;
  if (run_dir_ && !custom_rows_) {
    std::vector<std::pair<std::string, double>> row = {
        {step_column_, static_cast<double>(step)}, {"episodes", static_cast<double>(episodes)},
        {"return_mean", last_eval_.return_mean},   {"return_std", last_eval_.return_std},
        {"return_min", last_eval_.return_min},     {"return_max", last_eval_.return_max},
        {"length_mean", last_eval_.length_mean},   {"epsilon", epsilon_}};
    row.insert(row.end(), extra.begin(), extra.end());
    run_dir_->append_metrics(row);
  }
  if (hooks_.on_eval) hooks_.on_eval(EvalReport{step, step_column_, last_eval_, epsilon_});
  if (stop_now()) throw RunStopped(step);
  return last_eval_;
}

void TrainContext::append_metrics(const std::vector<std::pair<std::string, double>>& row) {
  custom_rows_ = true;
  if (run_dir_) run_dir_->append_metrics(row);
}

void TrainContext::set_dataset(std::shared_ptr<const Dataset> ds, std::string source) {
  dataset_ = std::move(ds);
  dataset_source_ = std::move(source);
}

std::optional<std::filesystem::path> TrainContext::run_dir() const {
  if (!run_dir_) return std::nullopt;
  return run_dir_->path();
}

void TrainContext::write_file(const std::string& name, std::string_view content) const {
  if (run_dir_) run_dir_->write_file(name, content);
}

void TrainContext::set_checkpoints(CheckpointSetup setup) {
  ckpt_ = std::move(setup);
  next_checkpoint_ = ckpt_.every;
}

namespace {
constexpr std::int64_t kMaxCheckpointStep = std::int64_t{1} << 53;
}

void TrainContext::sync_state(StateIo& io, std::int64_t& step) {
  io.section("checkpoint");
  std::string sha = ckpt_.config_sha256, algo = ckpt_.algo;
  io(sha);
  io(algo);
  if (io.loading() && (sha != ckpt_.config_sha256 || algo != ckpt_.algo))
    throw DataError(fmt::format(
        "{}: checkpoint of another config (algo '{}', config digest {}), not of this run's "
        "config.yaml",
        ckpt_.resume_file.string(), algo, sha.substr(0, 12)));
  // private learners with train.until_budget run as many steps as the budget affords, which
  // train.steps does not bound
  io.bounded(step, std::int64_t{0}, std::max(train_.steps, kMaxCheckpointStep), "step");
  io.section("train_context");
  io(last_eval_.return_mean);
  io(last_eval_.return_std);
  io(last_eval_.return_min);
  io(last_eval_.return_max);
  io(last_eval_.length_mean);
  io(last_eval_.episodes);
  io.bounded(last_eval_step_, std::int64_t{-1}, step, "last evaluation step");
  // both schedules lie at most one interval ahead (evaluate() and save_checkpoint() advance them
  // one interval at a time); the evaluation may be due at the step itself (private learners save
  // before the evaluation that releases their state) or long past (a learner that evaluates only
  // at its end)
  const std::int64_t eval_gap = train_.eval_every > 0 ? train_.eval_every : train_.steps;
  io.bounded(next_eval_, std::int64_t{0}, step + eval_gap, "next evaluation step");
  // evaluations so far: at most one per interval crossed (each is due only past next_eval_)
  const auto max_rounds = std::min<std::int64_t>(step / eval_gap + 1, 1 << 30);
  io.bounded(rounds_, 0, static_cast<int>(max_rounds), "evaluation rounds");
  io(epsilon_);
  io(custom_rows_);
  if (ckpt_.every > 0)
    io.bounded(next_checkpoint_, step + 1, step + ckpt_.every, "next checkpoint step");
  else
    io(next_checkpoint_);
  if (run_dir_) run_dir_->sync_metrics(io);
}

bool TrainContext::resume(const SyncFn& sync) {
  if (ckpt_.resume_payload.empty()) return false;
  resumed_previous_ = ckpt_.resume_file.filename() == kPrevCheckpointFile;
  StateIo io(ckpt_.resume_payload, ckpt_.resume_file.string());
  std::int64_t step = 0;
  sync_state(io, step);
  sync(io);
  io.expect_end();
  if (run_dir_) run_dir_->resumed();  // metrics.csv may now be rewritten from the checkpoint
  ckpt_.resume_payload.clear();
  ckpt_.resume_payload.shrink_to_fit();
  return true;
}

bool TrainContext::checkpoint_due(std::int64_t step) const {
  // (only in a context that checkpoints: not in the teacher a kickstarting learner trains first)
  if (const auto k = test_kill_at_step(); ckpt_.every > 0 && k >= 0 && step >= k) kill_self();
  return ckpt_.every > 0 && (step >= next_checkpoint_ || hooks_.stop.stop_requested());
}

void TrainContext::save_checkpoint(std::int64_t step, const SyncFn& sync) {
  if (ckpt_.every <= 0) return;
  while (next_checkpoint_ <= step) next_checkpoint_ += ckpt_.every;
  StateIo io;
  sync_state(io, step);
  sync(io);
  write_run_checkpoint(ckpt_.dir, io.bytes());
  if (run_dir_) run_dir_->flush_metrics();  // what the checkpoint holds (held metrics too)
  ++checkpoints_written_;
  if (const auto n = test_kill_after_checkpoints(); n >= 0 && checkpoints_written_ >= n)
    kill_self();
  if (hooks_.stop.stop_requested()) throw RunStopped(step);
}

}  // namespace dprl::algos
