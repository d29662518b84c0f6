// SweepDispatcher, local workers and the sweep's timing.json (see sweep.hpp).
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

#include "algos/run/sweep.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/thread_pool.hpp"

namespace dprl::algos {
namespace {

using Status = RunOutcome::Status;

// "[3/8] lr=0.1 seed 2: return 7.9012" or "... FAILED: <error>"
std::string run_line(const SweepRun& run, std::size_t total, const RunOutcome& o) {
  const std::string head =
      fmt::format("[{}/{}] {} seed {}", run.index + 1, total, run.label, run.seed);
  if (o.status == Status::kFailed) return fmt::format("{}: FAILED: {}", head, o.error);
  double ret = NAN;
  try {
    const auto j = nlohmann::json::parse(o.summary);
    const auto& r = j.at("final_eval").at("return_mean");
    if (r.is_number()) ret = r.get<double>();
  } catch (const std::exception&) {
    // the tables report a malformed summary; this line is informative only
  }
  return fmt::format("{}: return {:.4f}", head, ret);
}

void write_timing(const SweepPlan& plan, const std::vector<RunOutcome>& outcomes, int ranks,
                  int jobs, double wall_time_s) {
  static const char* kStatus[] = {"pending", "ran", "skipped", "failed"};
  nlohmann::ordered_json j;
  j["wall_time_s"] = wall_time_s;
  j["ranks"] = ranks;
  j["jobs"] = jobs;
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < plan.runs.size(); ++i) {
    const RunOutcome& o = outcomes[i];
    nlohmann::ordered_json r;
    r["run"] = i;
    r["dir"] = plan.runs[i].out.string();
    r["status"] = kStatus[static_cast<int>(o.status)];
    const bool executed = o.status == Status::kDone || o.status == Status::kFailed;
    r["wall_time_s"] = executed ? nlohmann::ordered_json(o.wall_time_s) : nullptr;
    r["rank"] = executed ? nlohmann::ordered_json(o.rank) : nullptr;
    runs.push_back(std::move(r));
  }
  j["runs"] = std::move(runs);
  write_file_atomic(plan.out / "timing.json", j.dump(2) + "\n");
}

}  // namespace

SweepDispatcher::SweepDispatcher(const SweepPlan& plan, const SweepOptions& opts, int ranks)
    : plan_(plan),
      opts_(opts),
      ranks_(ranks),
      outcomes_(plan.runs.size()),
      start_(std::chrono::steady_clock::now()) {
  if (opts.jobs < 1) throw ParamError(fmt::format("--jobs = {}: must be at least 1", opts.jobs));
  for (const SweepRun& run : plan.runs) {
    const RunState st = opts.force ? RunState{} : run_state(run);
    if (st.kind == RunState::Kind::kComplete) {
      outcomes_[run.index].status = Status::kSkipped;
      outcomes_[run.index].summary = st.summary;
      continue;
    }
    if (st.kind == RunState::Kind::kOtherConfig)
      fmt::print(stderr, "dprl: note: {} holds a run of a different config; rerunning it\n",
                 run.out.string());
    if (st.kind == RunState::Kind::kAltered)
      fmt::print(stderr,
                 "dprl: note: {} has a summary.json its run.json does not match; rerunning it\n",
                 run.out.string());
    todo_.push_back(run.index);
  }
  if (!opts.quiet)
    fmt::print(stderr, "sweep: {} runs, {} complete, {} to run on {} rank{} x {} job{} into {}\n",
               plan.runs.size(), plan.runs.size() - todo_.size(), todo_.size(), ranks,
               ranks == 1 ? "" : "s", opts.jobs, opts.jobs == 1 ? "" : "s", plan.out.string());
  const auto mode = opts.quiet ? Progress::Mode::kOff : opts.progress;
  progress_ =
      std::make_unique<SweepProgress>(mode, plan.runs.size(), plan.runs.size() - todo_.size());
}

SweepDispatcher::~SweepDispatcher() = default;

std::optional<std::size_t> SweepDispatcher::next() {
  std::lock_guard lock(mutex_);
  if (next_ == todo_.size()) return std::nullopt;
  return todo_[next_++];
}

void SweepDispatcher::record(std::size_t index, RunOutcome outcome) {
  DPRL_CHECK(index < outcomes_.size());
  std::lock_guard lock(mutex_);
  DPRL_CHECK(outcomes_[index].status == Status::kPending);
  const bool failed = outcome.status == Status::kFailed;
  outcomes_[index] = std::move(outcome);
  ++recorded_;
  progress_->run_finished(failed,
                          !opts_.quiet || failed
                              ? run_line(plan_.runs[index], plan_.runs.size(), outcomes_[index])
                              : std::string());
  changed_.notify_all();
}

bool SweepDispatcher::done() const {
  std::lock_guard lock(mutex_);
  return recorded_ == todo_.size();
}

bool SweepDispatcher::wait_done(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  const bool all = changed_.wait_for(lock, timeout, [&] { return recorded_ == todo_.size(); });
  progress_->tick();
  return all;
}

SweepResult SweepDispatcher::finish() {
  std::lock_guard lock(mutex_);
  DPRL_CHECK(recorded_ == todo_.size());
  progress_->finish();
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  SweepResult result = write_sweep_tables(plan_, outcomes_);
  write_timing(plan_, outcomes_, ranks_, opts_.jobs, secs);
  return result;
}

void work_local(SweepDispatcher& d, int jobs, int rank) {
  const ConcurrentRuns running(jobs);  // so that private runs start helpers only on spare CPUs
  auto loop = [&d, rank] {
    while (const auto i = d.next())
      d.record(*i, execute_run(d.plan().runs[*i], rank, d.from_checkpoints()));
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(loop);
  for (auto& t : threads) t.join();
}

SweepResult run_sweep(const SweepPlan& plan, const SweepOptions& opts) {
  SweepDispatcher d(plan, opts, 1);
  std::thread workers([&] { work_local(d, opts.jobs, 0); });
  while (!d.wait_done(std::chrono::milliseconds(1000))) {
  }
  workers.join();
  return d.finish();
}

}  // namespace dprl::algos
