#include "engine/thread_pool.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <atomic>
#include <limits>

#include "engine/cpu_time.hpp"
#include "engine/error.hpp"

namespace dprl {

namespace {

constexpr int kMaxThreads = 1024;

// > 0 while this thread runs a parallel_for body; nested calls then run inline.
thread_local int t_body_depth = 0;
// CPU seconds worker threads spent in the jobs this thread submitted
thread_local double t_helper_cpu = 0.0;

struct BodyScope {
  BodyScope() { ++t_body_depth; }
  ~BodyScope() { --t_body_depth; }
  BodyScope(const BodyScope&) = delete;
  BodyScope& operator=(const BodyScope&) = delete;
};

}  // namespace

int hardware_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

// One parallel_for call; lives on the caller's stack until every participant has left it.
struct ThreadPool::Job {
  const std::function<void(std::size_t)>* fn = nullptr;
  std::size_t n = 0;
  std::atomic<std::size_t> next{0};  // next index to claim
  std::atomic<bool> failed{false};   // stop claiming once set
  std::mutex error_mutex;
  std::size_t error_index = std::numeric_limits<std::size_t>::max();
  std::exception_ptr error;
  double helper_cpu = 0.0;  // the workers' CPU seconds in this job (guarded by the pool mutex)
};

double work_cpu_seconds() { return thread_cpu_seconds() + t_helper_cpu; }

ThreadPool::ThreadPool(int threads) {
  if (threads < 1 || threads > kMaxThreads)
    throw ParamError(
        fmt::format("thread pool size must be in [1, {}], got {}", kMaxThreads, threads));
  size_ = threads;
  workers_.reserve(static_cast<std::size_t>(threads - 1));
  try {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this] { worker_loop(); });
  } catch (...) {
    {
      std::lock_guard lk(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
    throw;
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lk(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run_job(Job& job) {
  BodyScope scope;
  // claims are increasing, so when index j fails every index below j has already been claimed
  // and runs to completion: the lowest throwing index is always recorded
  while (!job.failed.load(std::memory_order_relaxed)) {
    const std::size_t i = job.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= job.n) break;
    try {
      (*job.fn)(i);
    } catch (...) {
      std::lock_guard lk(job.error_mutex);
      if (i < job.error_index) {
        job.error_index = i;
        job.error = std::current_exception();
      }
      job.failed.store(true, std::memory_order_relaxed);
    }
  }
}

void ThreadPool::worker_loop() {
  std::uint64_t seen = 0;
  std::unique_lock lk(mutex_);
  for (;;) {
    wake_.wait(lk, [&] { return stop_ || (job_ != nullptr && generation_ != seen); });
    if (stop_) return;
    seen = generation_;
    Job* job = job_;
    ++busy_;
    lk.unlock();
    const double cpu0 = thread_cpu_seconds();
    run_job(*job);
    const double cpu = thread_cpu_seconds() - cpu0;
    lk.lock();
    job->helper_cpu += cpu;
    if (--busy_ == 0) done_.notify_all();
  }
}

void ThreadPool::parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  if (n == 0) return;
  // inline: a one-thread pool, or a nested call from inside a body (never wait on ourselves)
  if (size_ == 1 || t_body_depth > 0) {
    BodyScope scope;
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::lock_guard submit(submit_mutex_);
  Job job;
  job.fn = &fn;
  job.n = n;
  {
    std::lock_guard lk(mutex_);
    job_ = &job;
    ++generation_;
  }
  wake_.notify_all();
  run_job(job);
  {
    // workers that have not joined yet see job_ == nullptr and go back to sleep
    std::unique_lock lk(mutex_);
    done_.wait(lk, [&] { return busy_ == 0; });
    job_ = nullptr;
  }
  t_helper_cpu += job.helper_cpu;
  if (job.error) std::rethrow_exception(job.error);
}

namespace {
std::atomic<int> g_concurrent_runs{1};
}

int concurrent_runs() { return g_concurrent_runs.load(std::memory_order_relaxed); }

ConcurrentRuns::ConcurrentRuns(int runs) : added_(runs > 1 ? runs - 1 : 0) {
  g_concurrent_runs.fetch_add(added_, std::memory_order_relaxed);
}

ConcurrentRuns::~ConcurrentRuns() { g_concurrent_runs.fetch_sub(added_, std::memory_order_relaxed); }

HelperThread::HelperThread() : thread_([this] { loop(); }) {}

HelperThread::~HelperThread() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void HelperThread::post(std::function<void()> job) {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_all();
}

bool HelperThread::idle() {
  const std::lock_guard<std::mutex> lock(mu_);
  return jobs_.empty() && !running_;
}

void HelperThread::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return jobs_.empty() && !running_; });
  t_helper_cpu += cpu_;
  cpu_ = 0.0;
  if (error_) {
    const std::exception_ptr err = error_;
    error_ = nullptr;
    std::rethrow_exception(err);
  }
}

void HelperThread::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, nothing left
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    running_ = true;
    lock.unlock();
    std::exception_ptr err;
    const double cpu0 = thread_cpu_seconds();
    try {
      job();
    } catch (...) {
      err = std::current_exception();
    }
    const double cpu = thread_cpu_seconds() - cpu0;
    lock.lock();
    running_ = false;
    cpu_ += cpu;
    if (err && !error_) error_ = err;
    cv_.notify_all();
  }
}

}  // namespace dprl
