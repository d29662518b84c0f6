// A small fixed-size thread pool with a blocking parallel_for.
//
// ThreadPool(n) keeps n - 1 std::thread workers; the calling thread is the n-th participant, so
// size 1 runs everything inline on the caller with no threads at all. parallel_for(n, fn) calls
// fn(i) once for every i in [0, n), claiming indices in increasing order, and returns when all
// calls have finished.
//
// Determinism (streams belong to units of work, not threads): which thread runs an index is
// unspecified, so fn must write its result by index (out[i] = ...) and take any randomness from a
// stream derived from i, never from the thread. Reductions then run over the results in index
// order, and outputs are identical at any pool size.
//
// Exceptions: once some fn(i) throws, no new indices are started; calls already running finish.
// Because indices are claimed in increasing order, every index below a throwing one has been
// started, so the exception rethrown is always the one from the lowest throwing index, the same
// one a serial loop would have hit first (provided fn throws deterministically per index).
//
// Nesting: parallel_for called from inside fn (on any pool) runs inline on the calling thread, so
// nested calls cannot deadlock. Concurrent parallel_for calls on one pool from different outside
// threads are serialised.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dprl {

// Number of CPUs this process may run on (its affinity mask), at least 1.
int hardware_threads();

// CPU seconds of the calling thread plus those worker threads spent in the parallel_for jobs it
// submitted (on any pool): the CPU cost of one run even when other runs share the process (a
// sweep's jobs), where process CPU time would count them all. Differences are what matter.
double work_cpu_seconds();

class ThreadPool {
 public:
  // threads >= 1 (ParamError otherwise); pass hardware_threads() for one per CPU.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Participants in each parallel_for, the caller included.
  int size() const { return size_; }

  // Calls fn(i) for i in [0, n) and blocks until all are done; rethrows the exception of the
  // lowest throwing index. n == 0 returns at once.
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn);

 private:
  struct Job;
  void worker_loop();
  static void run_job(Job& job);

  int size_ = 1;
  std::vector<std::thread> workers_;
  std::mutex submit_mutex_;  // one parallel_for at a time per pool
  std::mutex mutex_;         // guards the fields below
  std::condition_variable wake_;
  std::condition_variable done_;
  Job* job_ = nullptr;            // the current job, or null
  std::uint64_t generation_ = 0;  // bumped per job so a worker joins each job at most once
  int busy_ = 0;                  // workers inside the current job
  bool stop_ = false;
};

// Experiments this process runs at once: 1 outside sweeps; a sweep's local workers raise it by
// their count while they run (ConcurrentRuns). A run starts helper threads only when the process
// may use more CPUs than that (privacy/prefetched_release.hpp, train.noise_threads: -1).
int concurrent_runs();
class ConcurrentRuns {
 public:
  explicit ConcurrentRuns(int runs);  // adds runs - 1 (the calling run is counted already)
  ~ConcurrentRuns();
  ConcurrentRuns(const ConcurrentRuns&) = delete;
  ConcurrentRuns& operator=(const ConcurrentRuns&) = delete;

 private:
  int added_;
};

// One worker thread that runs the jobs posted to it, in order, while the poster goes on: work
// that overlaps the caller's (a private step's next noise, half of its double product). wait()
// returns once every job posted so far has finished, rethrows the first exception one of them
// threw since the last wait(), and credits their CPU time to the caller's work_cpu_seconds().
// One poster at a time (the object is not for several threads to post to).
class HelperThread {
 public:
  HelperThread();
  ~HelperThread();  // finishes the jobs posted, then joins
  HelperThread(const HelperThread&) = delete;
  HelperThread& operator=(const HelperThread&) = delete;

  void post(std::function<void()> job);
  void wait();
  // No job waiting or running: a job posted now starts at once.
  bool idle();

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool running_ = false, stop_ = false;
  double cpu_ = 0.0;  // CPU seconds of the jobs finished since the last wait()
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace dprl
