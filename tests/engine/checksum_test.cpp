#include "engine/checksum.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

TEST_SUITE("unit") {
  TEST_CASE("fnv1a64 matches the published FNV-1a 64 test vectors") {
    // Fowler, Noll and Vo's reference vectors for FNV-1a 64
    CHECK(dprl::fnv1a64(std::string_view{}) == 0xcbf29ce484222325ULL);
    CHECK(dprl::fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
    CHECK(dprl::fnv1a64("foobar") == 0x85944171f73967e8ULL);
    CHECK(dprl::fnv1a64("\xff\xff\xff") == 0xf998341be47bae14ULL);  // bytes above 0x7f, unsigned
  }

  TEST_CASE("the short basis is the one network and checkpoint and cache files were saved with") {
    CHECK(dprl::kFnvBasisShort == 1469598103934665603ULL);
    CHECK(dprl::fnv1a64("a", dprl::kFnvBasisShort) == 0x44bd8ad473cd9906ULL);
    CHECK(dprl::fnv1a64("foobar", dprl::kFnvBasisShort) == 0x88fad7c0a8ff07f2ULL);
  }
}
