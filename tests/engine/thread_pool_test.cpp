#include "engine/thread_pool.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/cpu_time.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"

namespace {

// Per-index work with a stream derived from the index: the result must not depend on the thread.
std::vector<double> per_index_results(int threads, std::size_t n) {
  dprl::ThreadPool pool(threads);
  std::vector<double> out(n);
  pool.parallel_for(n, [&](std::size_t i) {
    dprl::Rng rng(dprl::derive_seed(42, dprl::Domain::kEval, i, 0));
    double s = 0.0;
    for (int k = 0; k < 100; ++k) s += rng.uniform();
    out[i] = s;
  });
  return out;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("thread pool: every index runs exactly once at 1 and 2 and 4 threads") {
    for (int threads : {1, 2, 4}) {
      CAPTURE(threads);
      dprl::ThreadPool pool(threads);
      CHECK(pool.size() == threads);
      const std::size_t n = 10007;
      std::vector<std::atomic<int>> hits(n);
      pool.parallel_for(n, [&](std::size_t i) { hits[i].fetch_add(1); });
      int wrong = 0;
      for (auto& h : hits) wrong += h.load() != 1;
      CHECK(wrong == 0);
    }
  }

  TEST_CASE("thread pool: results written by index are identical at any thread count") {
    const auto one = per_index_results(1, 1000);
    const auto two = per_index_results(2, 1000);
    const auto four = per_index_results(4, 1000);
    CHECK(one == two);
    CHECK(one == four);
    // an index-ordered reduction is then bit-identical too
    double s1 = 0.0, s4 = 0.0;
    for (std::size_t i = 0; i < one.size(); ++i) s1 += one[i], s4 += four[i];
    CHECK(s1 == s4);
  }

  TEST_CASE("thread pool: a pool is reusable across many calls") {
    dprl::ThreadPool pool(4);
    std::uint64_t total = 0;
    for (std::size_t round = 0; round < 200; ++round) {
      std::vector<std::uint64_t> out(round % 17);
      pool.parallel_for(out.size(), [&](std::size_t i) { out[i] = i * i; });
      for (auto v : out) total += v;
    }
    std::uint64_t expect = 0;
    for (std::size_t round = 0; round < 200; ++round)
      for (std::size_t i = 0; i < round % 17; ++i) expect += i * i;
    CHECK(total == expect);
  }

  TEST_CASE("thread pool: the exception of the lowest throwing index is rethrown") {
    for (int threads : {1, 2, 4}) {
      CAPTURE(threads);
      dprl::ThreadPool pool(threads);
      for (int rep = 0; rep < 20; ++rep) {
        std::string what;
        try {
          pool.parallel_for(1000, [&](std::size_t i) {
            if (i == 700 || i == 300 || i == 301 || i == 999)
              throw std::runtime_error("index " + std::to_string(i));
          });
        } catch (const std::runtime_error& e) {
          what = e.what();
        }
        CHECK(what == "index 300");
      }
      // the pool still works after an exception
      std::vector<int> out(64, 0);
      pool.parallel_for(out.size(), [&](std::size_t i) { out[i] = static_cast<int>(i); });
      CHECK(out[63] == 63);
    }
  }

  TEST_CASE("thread pool: typed dprl errors keep their type") {
    dprl::ThreadPool pool(2);
    CHECK_THROWS_AS(pool.parallel_for(10, [](std::size_t) { throw dprl::DataError("bad"); }),
                    dprl::DataError);
  }

  TEST_CASE("thread pool: zero-size and nested calls are safe") {
    dprl::ThreadPool pool(4);
    bool called = false;
    pool.parallel_for(0, [&](std::size_t) { called = true; });
    CHECK_FALSE(called);

    // nested calls on the same pool run inline on the calling thread
    const std::size_t outer = 16, inner = 32;
    std::vector<std::uint64_t> out(outer * inner, 0);
    pool.parallel_for(outer, [&](std::size_t i) {
      pool.parallel_for(inner, [&](std::size_t j) { out[i * inner + j] = i * 1000 + j; });
    });
    int wrong = 0;
    for (std::size_t i = 0; i < outer; ++i)
      for (std::size_t j = 0; j < inner; ++j) wrong += out[i * inner + j] != i * 1000 + j;
    CHECK(wrong == 0);

    // an exception from a nested call reaches the outer caller
    CHECK_THROWS_AS(pool.parallel_for(4,
                                      [&](std::size_t) {
                                        pool.parallel_for(4, [](std::size_t) {
                                          throw std::logic_error("inner");
                                        });
                                      }),
                    std::logic_error);
  }

  TEST_CASE("thread pool: work_cpu_seconds counts the workers' CPU for the submitting thread") {
    // each index spins on its own thread's CPU clock; the submitter's work CPU must cover the sum
    // of every index's CPU, wherever it ran, and its own thread clock only its share
    dprl::ThreadPool pool(2);
    std::mutex m;
    double spent = 0.0;
    const double work0 = dprl::work_cpu_seconds(), thread0 = dprl::thread_cpu_seconds();
    pool.parallel_for(8, [&](std::size_t) {
      const double c0 = dprl::thread_cpu_seconds();
      volatile double x = 0.0;
      while (dprl::thread_cpu_seconds() - c0 < 0.02) x = x + 1.0;
      std::lock_guard lk(m);
      spent += dprl::thread_cpu_seconds() - c0;
    });
    const double work = dprl::work_cpu_seconds() - work0;
    const double own = dprl::thread_cpu_seconds() - thread0;
    CHECK(spent >= 0.16);
    CHECK(work >= spent);
    CHECK(own < work);
    // a one-thread pool runs inline: everything is the caller's own thread time
    dprl::ThreadPool one(1);
    const double w1 = dprl::work_cpu_seconds(), t1 = dprl::thread_cpu_seconds();
    one.parallel_for(2, [&](std::size_t) {
      const double c0 = dprl::thread_cpu_seconds();
      volatile double x = 0.0;
      while (dprl::thread_cpu_seconds() - c0 < 0.01) x = x + 1.0;
    });
    CHECK(dprl::work_cpu_seconds() - w1 == doctest::Approx(dprl::thread_cpu_seconds() - t1)
                                               .epsilon(0.01));
  }

  TEST_CASE("thread pool: invalid sizes are rejected and hardware_threads is positive") {
    CHECK_THROWS_AS(dprl::ThreadPool(0), dprl::ParamError);
    CHECK_THROWS_AS(dprl::ThreadPool(-3), dprl::ParamError);
    CHECK(dprl::hardware_threads() >= 1);
  }
}
