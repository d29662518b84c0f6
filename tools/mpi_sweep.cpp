// The MPI sweep runner (see mpi_sweep.hpp); the only source that includes mpi.h.
#include "tools/mpi_sweep.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "engine/error.hpp"
#include "engine/sha256.hpp"

namespace dprl::cli {
namespace {

using algos::SweepDispatcher;
using algos::SweepOptions;
using algos::SweepPlan;

enum Tag : int {
  kAsk = 1,     // rank k -> 0: one int, no meaning; answered by kAssign
  kAssign = 2,  // 0 -> rank k: one int64, a run index or -1 (no more runs)
  kResult = 3,  // rank k -> 0: outcome_to_json text
};

constexpr auto kPoll = std::chrono::milliseconds(1);

// Waits for a message without spinning a core: Open MPI's blocking receives busy-poll.
MPI_Status wait_for(int source, int tag) {
  MPI_Status st;
  int flag = 0;
  while (MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, &st), !flag)
    std::this_thread::sleep_for(kPoll);
  return st;
}

// An error on one rank while others may wait on it ends them all (a joinable thread must not be
// unwound past either).
[[noreturn]] void fail(const MpiWorld& world, const std::exception& e) {
  fmt::print(stderr, "dprl: rank {}: {}\n", world.rank(), e.what());
  world.abort(2);
}

// A closable queue between a rank's MPI thread and its worker threads.
template <class T>
class Channel {
 public:
  void push(T v) {
    {
      std::lock_guard lock(mutex_);
      items_.push_back(std::move(v));
    }
    cv_.notify_one();
  }
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    cv_.notify_all();
  }
  // Blocks until an item arrives; none once closed and empty.
  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T v = std::move(items_.front());
    items_.pop_front();
    return v;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<T> items_;
  bool closed_ = false;
};

// Rank 0: runs `jobs` runs at a time itself and answers the other ranks until all have finished.
algos::SweepResult coordinate(const MpiWorld& world, const SweepPlan& plan,
                              const SweepOptions& opts) {
  SweepDispatcher d(plan, opts, world.size());
  std::thread local([&] { algos::work_local(d, opts.jobs, 0); });
  int drained = 0;  // ranks told that no run is left
  try {
    while (drained < world.size() - 1 || !d.done()) {
      MPI_Status st;
      int flag = 0;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
      if (!flag) {
        if (d.done())
          std::this_thread::sleep_for(kPoll);
        else
          d.wait_done(kPoll);  // sleeps, and keeps the progress line moving
        continue;
      }
      if (st.MPI_TAG == kAsk) {
        int dummy = 0;
        MPI_Recv(&dummy, 1, MPI_INT, st.MPI_SOURCE, kAsk, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const auto next = d.next();
        const std::int64_t index = next ? static_cast<std::int64_t>(*next) : -1;
        MPI_Send(&index, 1, MPI_INT64_T, st.MPI_SOURCE, kAssign, MPI_COMM_WORLD);
        if (!next) ++drained;
      } else if (st.MPI_TAG == kResult) {
        int n = 0;
        MPI_Get_count(&st, MPI_CHAR, &n);
        std::string text(static_cast<std::size_t>(n), '\0');
        MPI_Recv(text.data(), n, MPI_CHAR, st.MPI_SOURCE, kResult, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        auto [index, outcome] = algos::outcome_from_json(text);
        if (index >= plan.runs.size())
          throw DataError(
              fmt::format("rank {} reported run {} of {}", st.MPI_SOURCE, index, plan.runs.size()));
        d.record(index, std::move(outcome));
      } else {
        throw DataError(
            fmt::format("unexpected message tag {} from rank {}", st.MPI_TAG, st.MPI_SOURCE));
      }
    }
  } catch (const std::exception& e) {
    fail(world, e);
  }
  local.join();
  return d.finish();
}

// Ranks 1..N-1: ask for a run whenever a local slot is free, send each outcome back.
void serve(const MpiWorld& world, const SweepPlan& plan, const SweepOptions& opts) {
  Channel<std::size_t> tasks;
  Channel<std::string> results;
  std::vector<std::thread> threads;
  for (int t = 0; t < opts.jobs; ++t)
    threads.emplace_back([&] {
      while (const auto i = tasks.pop())
        results.push(algos::outcome_to_json(
            *i, algos::execute_run(plan.runs[*i], world.rank(), !opts.force)));
    });
  int running = 0;
  bool no_more = false;
  try {
    for (;;) {
      while (!no_more && running < opts.jobs) {
        const int dummy = 0;
        MPI_Send(&dummy, 1, MPI_INT, 0, kAsk, MPI_COMM_WORLD);
        wait_for(0, kAssign);
        std::int64_t index = -1;
        MPI_Recv(&index, 1, MPI_INT64_T, 0, kAssign, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (index < 0) {
          no_more = true;
          tasks.close();
        } else {
          tasks.push(static_cast<std::size_t>(index));
          ++running;
        }
      }
      if (running == 0) break;
      const auto text = results.pop();  // workers only end after the tasks channel closes
      DPRL_CHECK(text.has_value());
      MPI_Send(text->data(), static_cast<int>(text->size()), MPI_CHAR, 0, kResult, MPI_COMM_WORLD);
      --running;
    }
  } catch (const std::exception& e) {
    fail(world, e);
  }
  for (auto& t : threads) t.join();
}

}  // namespace

MpiWorld::MpiWorld() {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (provided < MPI_THREAD_FUNNELED) {
    if (rank_ == 0)
      fmt::print(stderr, "dprl: the MPI library does not support threads (MPI_THREAD_FUNNELED)\n");
    abort(2);
  }
}

MpiWorld::~MpiWorld() { MPI_Finalize(); }

bool MpiWorld::agree(bool ready, const std::string& digest, bool& root_ready,
                     bool& same_plan) const {
  char root[65] = {};
  if (rank_ == 0) std::strncpy(root, digest.c_str(), 64);
  MPI_Bcast(root, 65, MPI_CHAR, 0, MPI_COMM_WORLD);
  same_plan = rank_ == 0 || digest == root;
  int flags[2] = {ready && same_plan ? 1 : 0, ready ? 1 : 0};
  MPI_Bcast(&flags[1], 1, MPI_INT, 0, MPI_COMM_WORLD);  // every rank learns rank 0's flag
  root_ready = flags[1] != 0;
  int all = 0;
  MPI_Allreduce(&flags[0], &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all != 0;
}

void MpiWorld::abort(int code) const {
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // not reached
}

std::string plan_digest(const SweepPlan& plan) {
  std::string text = plan.out.string() + "\n";
  for (const auto& run : plan.runs)
    text += fmt::format("{}\t{}\n", run.out.string(), run.config_sha256);
  return sha256_hex(text);
}

std::optional<algos::SweepResult> run_sweep_mpi(const MpiWorld& world, const SweepPlan& plan,
                                                const SweepOptions& opts) {
  try {
    if (world.rank() == 0) return coordinate(world, plan, opts);
    serve(world, plan, opts);
    return std::nullopt;
  } catch (const std::exception& e) {
    fail(world, e);  // e.g. rank 0 cannot write the tables
  }
}

}  // namespace dprl::cli
