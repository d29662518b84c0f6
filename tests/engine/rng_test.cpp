#include "engine/rng.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

TEST_SUITE("unit") {
TEST_CASE("splitmix64 matches the published outputs for seed 1234567") {
  // Vigna's splitmix64.c reference, seed 1234567 (also Java's SplittableRandom test vector).
  std::uint64_t s = 1234567;
  CHECK(dprl::splitmix64_next(s) == 6457827717110365317ULL);
  CHECK(dprl::splitmix64_next(s) == 3203168211198807973ULL);
  CHECK(dprl::splitmix64_next(s) == 9817491932198370423ULL);
  CHECK(dprl::splitmix64_next(s) == 4593380528125082431ULL);
  CHECK(dprl::splitmix64_next(s) == 16408922859458223821ULL);
}

TEST_CASE("xoshiro256** matches the reference outputs from state {1, 2, 3, 4}") {
  auto r = dprl::Rng::from_state(1, 2, 3, 4);
  CHECK(r.next_u64() == 11520ULL);
  CHECK(r.next_u64() == 0ULL);
  CHECK(r.next_u64() == 1509978240ULL);
  CHECK(r.next_u64() == 1215971899390074240ULL);
}
}
