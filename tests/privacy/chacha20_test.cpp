#include "privacy/chacha20.hpp"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/error.hpp"
#include "privacy/noise_source.hpp"

using namespace dprl::privacy;

TEST_SUITE("unit") {
  TEST_CASE("chacha20 block matches the RFC 8439 test vector (section 2.3.2)") {
    // key 00 01 .. 1f, nonce 00 00 00 09 00 00 00 4a 00 00 00 00, counter 1 (little-endian words)
    std::array<std::uint32_t, 8> key;
    for (int i = 0; i < 8; ++i) {
      const auto b = static_cast<std::uint32_t>(4 * i);
      key[i] = b | (b + 1) << 8 | (b + 2) << 16 | (b + 3) << 24;
    }
    std::array<std::uint32_t, 16> out;
    chacha20_block(key, 1, {0x09000000u, 0x4a000000u, 0}, out);
    const std::array<std::uint32_t, 16> expected = {0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3,
                                                    0xc7f4d1c7, 0x0368c033, 0x9aaa2204, 0x4e6cd4c3,
                                                    0x466482d2, 0x09aa9f07, 0x05d7c214, 0xa2028bd9,
                                                    0xd19c12b5, 0xb94e16de, 0xe883d0cb, 0x4e3c50a2};
    CHECK(out == expected);
  }

  TEST_CASE("chacha20: sixteen blocks in word-major order equal sixteen single blocks") {
    std::array<std::uint32_t, 8> key = {0x9e3779b9u, 1u, 0xfffffffeu, 0x7f4a7c15u,
                                        0u,          3u, 0xc0ffee00u, 0x13579bdfu};
    // the dispatched kernel (AVX-512 where the processor has it) and the AVX2 (or portable) one
    std::uint32_t many[256], avx2[256];
    chacha20_blocks16_word_major(key, 0xfffffff8u, many);  // the counter wraps inside the batch
    detail::chacha20_blocks16_word_major_avx2(key, 0xfffffff8u, avx2);
    for (std::uint32_t l = 0; l < 16; ++l) {
      std::array<std::uint32_t, 16> one;
      chacha20_block(key, 0xfffffff8u + l, {0, 0, 0}, one);
      for (int w = 0; w < 16; ++w) {
        CHECK(many[16 * w + l] == one[w]);
        CHECK(avx2[16 * w + l] == one[w]);
      }
    }
  }
}

TEST_SUITE("golden") {
  // C2SP's "ChaCha8Rand" specification, section "Sample output": the seed is the ASCII string
  // ABCDEFGHIJKLMNOPQRSTUVWXYZ123456 and the output, as little-endian 64-bit words, begins as
  // below. Words 120-127 straddle the first iteration's end (124 words; the next key is its last
  // 32 bytes) and 368-371 end the third iteration.
  TEST_CASE("ChaCha8Rand reproduces the specification's sample output") {
    const char* seed = "ABCDEFGHIJKLMNOPQRSTUVWXYZ123456";
    std::array<std::uint32_t, 8> key;
    for (int i = 0; i < 8; ++i) std::memcpy(&key[i], seed + 4 * i, 4);  // little-endian words
    Chacha8Rand rng(key);
    std::vector<std::uint64_t> out(372);
    for (auto& w : out) w = rng.next_u64();
    const std::uint64_t first[4] = {0xb773b6063d4616a5, 0x1160af22a66abc3c, 0x8c2599d9418d287c,
                                    0x7ee07e037edc5cd6};
    const std::uint64_t boundary[8] = {0x1cf08ce1b1176f00, 0xccf7d0a4b81ecb49, 0x303fea136b2c430e,
                                       0x861d6c139c06c871, 0x5f41df72e05e0487, 0x25bd7e1e1ae26b1d,
                                       0xbe9f4004d662a41d, 0x65bf58d483188546};
    const std::uint64_t last[4] = {0xedb523bd15c619fa, 0x02d97fd53ecc23c0, 0xacaf05a34462374c,
                                   0xddd9c6d34bffa11f};
    for (int i = 0; i < 4; ++i) CHECK(out[i] == first[i]);
    for (int i = 0; i < 8; ++i) CHECK(out[120 + i] == boundary[i]);
    for (int i = 0; i < 4; ++i) CHECK(out[368 + i] == last[i]);
  }

  TEST_CASE("ChaCha8Rand: the vector kernels equal the scalar iteration, restore resumes exactly") {
    std::array<std::uint32_t, 8> key = {0x9e3779b9u, 1u, 0xfffffffeu, 0x7f4a7c15u,
                                        0u,          3u, 0xc0ffee00u, 0x13579bdfu};
    alignas(64) std::uint64_t fast[128], avx2[128], ref[128];
    for (int round = 0; round < 4; ++round) {
      chacha8rand_iteration(key, fast);
      detail::chacha8rand_iteration_avx2(key, avx2);
      detail::chacha8rand_iteration_scalar(key, ref);
      for (int i = 0; i < 128; ++i) {
        CHECK(fast[i] == ref[i]);
        CHECK(avx2[i] == ref[i]);
      }
      std::memcpy(key.data(), ref + 124, sizeof(key));
    }
    Chacha8Rand a(key);
    for (int i = 0; i < 200; ++i) (void)a.next_u64();
    Chacha8Rand b(key);
    b.restore(a.key(), a.position());
    for (int i = 0; i < 300; ++i) CHECK(a.next_u64() == b.next_u64());
    // take() hands out the same words as next_u64, at most to the iteration's end
    Chacha8Rand c(key), d(key);
    std::size_t got = 0;
    while (got < 500) {
      const auto words = c.take(37);
      REQUIRE(!words.empty());
      CHECK(words.size() <= 37);
      for (std::uint64_t w : words) CHECK(w == d.next_u64());
      got += words.size();
    }
    CHECK_THROWS_AS(c.restore(key, 125), dprl::DataError);
  }
}

TEST_SUITE("unit") {
  TEST_CASE("ChaCha8Rand counts the words it hands out, across iterations and restores") {
    Chacha8Rand g({1, 2, 3, 4, 5, 6, 7, 8});
    CHECK(g.words_drawn() == 0);
    (void)g.next_u64();
    CHECK(g.take(500).size() == Chacha8Rand::kOutput - 1);  // the rest of the first iteration
    CHECK(g.words_drawn() == Chacha8Rand::kOutput);
    CHECK(g.take(10).size() == 10);  // from the second iteration
    (void)g.next_u64();
    CHECK(g.words_drawn() == Chacha8Rand::kOutput + 11);
    CHECK(g.take(0).empty());
    g.restore(g.key(), 0);
    CHECK(g.words_drawn() == Chacha8Rand::kOutput + 11);
  }

  // The parent has drawn one word, so 123 drawn-but-unused words sit in its buffer when it
  // forks. The child's next words come from a fresh key: none equals the parent's next ones
  // (a chance collision of 64-bit words has probability 5^2 2^-64). Returns the equal count.
  int words_equal_after_fork(bool bulk) {
    Chacha20Rng rng;
    (void)rng.next_u64();
    int fd[2];
    REQUIRE(::pipe(fd) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    std::uint64_t mine[5];
    if (bulk) {
      rng.fill(mine, 5);
    } else {
      for (auto& x : mine) x = rng.next_u64();
    }
    if (pid == 0) {
      const bool ok = ::write(fd[1], mine, sizeof mine) == static_cast<ssize_t>(sizeof mine);
      ::_exit(ok ? 0 : 1);
    }
    ::close(fd[1]);
    std::uint64_t child[5];
    std::size_t got = 0;
    while (got < sizeof child) {
      const ssize_t n = ::read(fd[0], reinterpret_cast<char*>(child) + got, sizeof child - got);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    ::close(fd[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(got == sizeof child);
    CHECK(WIFEXITED(status));
    int equal = 0;
    for (const std::uint64_t a : mine)
      for (const std::uint64_t b : child) equal += a == b;
    return equal;
  }

  TEST_CASE("chacha20 generator: a forked child does not replay its parent's buffered words") {
    CHECK(words_equal_after_fork(false) == 0);
    CHECK(words_equal_after_fork(true) == 0);  // fill() checks the fork generation too
  }
}

TEST_SUITE("statistical") {
  TEST_CASE("os-entropy generator: two instances differ and bits are balanced") {
    Chacha20Rng a, b;
    int equal = 0;
    std::int64_t ones = 0;
    const int n = 1 << 16;  // 2^22 bits, crossing many refills and key erasures
    for (int i = 0; i < n; ++i) {
      const std::uint64_t x = a.next_u64();
      equal += x == b.next_u64();
      ones += std::popcount(x);
    }
    CHECK(equal == 0);
    // ones ~ Binomial(2^22, 1/2): sd 1024; |z| > 5.33 has probability < 1e-7
    CHECK(std::abs(static_cast<double>(ones) - n * 32.0) < 5.33 * 1024.0);
    CHECK(make_os_entropy_noise(true)->name() == "os_entropy(secure, chacha20)");
  }
}
