#include "privacy/prefetched_release.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "engine/error.hpp"
#include "engine/state_io.hpp"
#include "privacy/secure_release.hpp"

using dprl::DataError;
using dprl::ParamError;
using dprl::StateIo;
using namespace dprl::privacy;

namespace {

// A vector that changes from release to release (the "gradient"), values off the grid.
std::vector<double> gradient_of(int release, std::size_t n) {
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = std::sin(0.37 * static_cast<double>(i) + release) * (1.0 + 0.01 * release);
  return x;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Releases 0..count-1 through a prefetched release of `threads`, on a seeded source.
std::vector<std::vector<double>> prefetched_run(bool secure, std::size_t n, int threads,
                                                int count) {
  auto noise = make_seeded_noise(7, 1, 2, secure);
  const SecurePlan plan = gaussian_release_plan(1.5, 1.0, n, secure);
  PrefetchedGaussianRelease rel(*noise, n, plan.scale, plan.grid, threads);
  std::vector<std::vector<double>> out;
  for (int r = 0; r < count; ++r) {
    auto x = gradient_of(r, n);
    rel(x);
    out.push_back(std::move(x));
  }
  return out;
}

// The same releases made one at a time by add_gaussian_release.
std::vector<std::vector<double>> direct_run(bool secure, std::size_t n, int count) {
  auto noise = make_seeded_noise(7, 1, 2, secure);
  const SecurePlan plan = gaussian_release_plan(1.5, 1.0, n, secure);
  std::vector<std::vector<double>> out;
  for (int r = 0; r < count; ++r) {
    auto x = gradient_of(r, n);
    add_gaussian_release(x, plan.scale, plan.grid, *noise);
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("prefetched release: the values do not depend on the thread count") {
    // non-secure (ziggurat), secure on the table sampler (n >= 4096) and on the exact one
    for (const auto& [secure, n] : {std::pair{false, std::size_t{5000}},
                                    std::pair{true, std::size_t{5000}},
                                    std::pair{true, std::size_t{300}}}) {
      CAPTURE(secure);
      CAPTURE(n);
      const auto zero = prefetched_run(secure, n, 0, 5);
      const auto one = prefetched_run(secure, n, 1, 5);
      const auto direct = direct_run(secure, n, 5);
      for (int r = 0; r < 5; ++r) {
        CHECK(same_bits(zero[r], one[r]));
        // equal to the release made directly (values; a zero's sign aside)
        for (std::size_t i = 0; i < n; ++i) REQUIRE(zero[r][i] == direct[r][i]);
      }
      // the noise is there: releases differ from their inputs
      CHECK(zero[4][0] != gradient_of(4, n)[0]);
    }
  }

  TEST_CASE("prefetched release: a checkpoint holds the position before the noise drawn ahead") {
    const std::size_t n = 4096;
    for (const bool secure : {false, true}) {
      CAPTURE(secure);
      const SecurePlan plan = gaussian_release_plan(1.5, 1.0, n, secure);  // as prefetched_run
      const auto uninterrupted = prefetched_run(secure, n, 0, 4);
      std::string saved[2];
      for (int threads = 0; threads <= 1; ++threads) {
        auto noise = make_seeded_noise(7, 1, 2, secure);
        PrefetchedGaussianRelease rel(*noise, n, plan.scale, plan.grid, threads);
        for (int r = 0; r < 2; ++r) {
          auto x = gradient_of(r, n);
          rel(x);
        }
        StateIo io;
        rel.sync_state(io);
        saved[threads] = io.take();
      }
      // the same bytes with either thread count
      CHECK(saved[0] == saved[1]);
      // a fresh run loading it releases what the uninterrupted run released next, either way
      for (int threads = 0; threads <= 1; ++threads) {
        auto noise = make_seeded_noise(7, 1, 2, secure);
        for (int i = 0; i < 1000; ++i) noise->next_u64();  // another position, replaced
        PrefetchedGaussianRelease rel(*noise, n, plan.scale, plan.grid, threads);
        StateIo load(saved[threads], "test checkpoint");
        rel.sync_state(load);
        CHECK(load.at_end());
        for (int r = 2; r < 4; ++r) {
          auto x = gradient_of(r, n);
          rel(x);
          CHECK(same_bits(x, uninterrupted[r]));
        }
      }
    }
  }

  TEST_CASE("noise threads on auto: a helper only where a CPU is left beside the runs") {
    // outside a sweep one run: a helper when the process may use two CPUs
    CHECK(default_noise_threads() == (dprl::hardware_threads() > 1 ? 1 : 0));
    {
      // a sweep running as many runs as CPUs: none
      const dprl::ConcurrentRuns sweep(dprl::hardware_threads());
      CHECK(dprl::concurrent_runs() == dprl::hardware_threads());
      CHECK(default_noise_threads() == 0);
    }
    CHECK(dprl::concurrent_runs() == 1);
  }

  TEST_CASE("prefetched release: bad input is refused") {
    auto seeded = make_seeded_noise(1);
    auto secure = make_seeded_noise(1, 0, 0, true);
    CHECK_THROWS_AS(PrefetchedGaussianRelease(*seeded, 0, 1.0, 0.0, 0), ParamError);
    CHECK_THROWS_AS(PrefetchedGaussianRelease(*seeded, 10, 0.0, 0.0, 0), ParamError);
    CHECK_THROWS_AS(PrefetchedGaussianRelease(*seeded, 10, NAN, 0.0, 0), ParamError);
    CHECK_THROWS_AS(PrefetchedGaussianRelease(*seeded, 10, 1.0, 0.5, 0), ParamError);
    CHECK_THROWS_AS(PrefetchedGaussianRelease(*secure, 10, 1.0, 0.0, 0), ParamError);
    CHECK_THROWS_AS(PrefetchedGaussianRelease(*seeded, 10, 1.0, 0.0, 2), ParamError);
    CHECK_THROWS_AS(PrefetchedGaussianRelease(*seeded, 10, 1.0, 0.0, -1), ParamError);
    for (int threads = 0; threads <= 1; ++threads) {
      const SecurePlan plan = gaussian_release_plan(1.0, 1.0, 10, true);
      PrefetchedGaussianRelease rel(*secure, 10, plan.scale, plan.grid, threads);
      std::vector<double> short_x(9, 0.0), bad(10, 0.0);
      CHECK_THROWS_AS(rel(short_x), ParamError);
      bad[3] = INFINITY;
      CHECK_THROWS_AS(rel(bad), ParamError);
      std::vector<double> ok(10, 0.25);
      rel(ok);  // still usable
      CHECK(std::isfinite(ok[0]));
    }
  }

  TEST_CASE("prefetched release: the worker's error reaches the caller") {
    // a scripted source with noise for one release of 3 values (the ahead draw of the second
    // fails on the worker; the error comes out of the second call)
    for (int threads = 0; threads <= 1; ++threads) {
      auto noise = make_scripted_noise({0.1, -0.2, 0.3});
      PrefetchedGaussianRelease rel(*noise, 3, 1.0, 0.0, threads);
      std::vector<double> x = {1.0, 1.0, 1.0};
      rel(x);
      CHECK(x[0] == doctest::Approx(1.1));
      CHECK(x[1] == doctest::Approx(0.8));
      CHECK_THROWS_AS(rel(x), DataError);
    }
  }
}
