#include "privacy/chacha20.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <sys/random.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "engine/cpu_features.hpp"
#include "engine/error.hpp"

namespace dprl::privacy {

// Incremented in every forked child, so a generator notices a fork without a system call.
std::atomic<std::uint64_t> chacha20_fork_generation{0};

namespace {

constexpr std::uint32_t rotl(std::uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// One double round (RFC 8439, 2.3): the four column quarter-rounds, then the four diagonal ones,
// each QR(a, b, c, d) on state words a, b, c, d (a macro, so the AVX-512 kernel's rotation counts
// stay compile-time constants inside its target-specific function).
#define DPRL_CHACHA_DOUBLE_ROUND(QR) \
  QR(0, 4, 8, 12)                    \
  QR(1, 5, 9, 13)                    \
  QR(2, 6, 10, 14)                   \
  QR(3, 7, 11, 15)                   \
  QR(0, 5, 10, 15)                   \
  QR(1, 6, 11, 12)                   \
  QR(2, 7, 8, 13)                    \
  QR(3, 4, 9, 14)

// The sixteen input words of a block with a zero counter and nonce: the constants, then the key.
std::array<std::uint32_t, 16> chacha_key_words(const std::array<std::uint32_t, 8>& key) {
  return {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u, key[0], key[1], key[2], key[3],
          key[4],      key[5],      key[6],      key[7],      0,      0,      0,      0};
}

inline void quarter(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c, std::uint32_t& d) {
  a += b;
  d ^= a;
  d = rotl(d, 16);
  c += d;
  b ^= c;
  b = rotl(b, 12);
  a += b;
  d ^= a;
  d = rotl(d, 8);
  c += d;
  b ^= c;
  b = rotl(b, 7);
}

void on_fork_child() { chacha20_fork_generation.fetch_add(1, std::memory_order_relaxed); }
const int fork_hook = pthread_atfork(nullptr, nullptr, on_fork_child);

void os_bytes(void* dst, std::size_t size) {
  auto* bytes = static_cast<unsigned char*>(dst);
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = getrandom(bytes + got, size - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("getrandom failed: {}", std::strerror(errno)));
    }
    got += static_cast<std::size_t>(n);
  }
}

}  // namespace

void chacha_block(const std::array<std::uint32_t, 8>& key, std::uint32_t counter,
                  const std::array<std::uint32_t, 3>& nonce, int double_rounds,
                  std::array<std::uint32_t, 16>& out) {
  // "expand 32-byte k", the key, the block counter and the nonce (RFC 8439, 2.3)
  const std::array<std::uint32_t, 16> in = {
      0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u, key[0],  key[1],   key[2],   key[3],
      key[4],      key[5],      key[6],      key[7],      counter, nonce[0], nonce[1], nonce[2]};
  std::array<std::uint32_t, 16> x = in;
  for (int round = 0; round < double_rounds; ++round) {
    // a column round, then a diagonal round
#define DPRL_CHACHA_QR1(a, b, c, d) quarter(x[a], x[b], x[c], x[d]);
    DPRL_CHACHA_DOUBLE_ROUND(DPRL_CHACHA_QR1)
#undef DPRL_CHACHA_QR1
  }
  for (int i = 0; i < 16; ++i) out[i] = x[i] + in[i];
}

void chacha20_block(const std::array<std::uint32_t, 8>& key, std::uint32_t counter,
                    const std::array<std::uint32_t, 3>& nonce, std::array<std::uint32_t, 16>& out) {
  chacha_block(key, counter, nonce, 10, out);
}

Chacha20Rng::Chacha20Rng() { rekey_from_os(); }

void Chacha20Rng::rekey_from_os() {
  os_bytes(key_.data(), sizeof(key_));
  refills_ = 0;
  fork_generation_ = chacha20_fork_generation.load(std::memory_order_relaxed);
}

// kLanes blocks at once, structure of arrays (x[word][lane]) so the compiler vectorises each
// quarter-round across the lanes; lane l is block counter base + l. Equal, word for word, to
// chacha20_block (tested).
namespace {

template <int kLanes>
void chacha20_lanes(const std::array<std::uint32_t, 8>& key, std::uint32_t base,
                    std::uint32_t* out) {
  std::uint32_t in[16][kLanes], x[16][kLanes];
  const std::array<std::uint32_t, 16> words = chacha_key_words(key);
  for (int w = 0; w < 16; ++w)
    for (int l = 0; l < kLanes; ++l) in[w][l] = words[w];
  for (int l = 0; l < kLanes; ++l) in[12][l] = base + static_cast<std::uint32_t>(l);
  std::memcpy(x, in, sizeof(x));
  for (int round = 0; round < 10; ++round) {
    // a column round, then a diagonal round; each quarter-round runs across the lanes
#define DPRL_CHACHA_QR(a, b, c, d)         \
  for (int l = 0; l < kLanes; ++l) {       \
    x[a][l] += x[b][l];                    \
    x[d][l] = rotl(x[d][l] ^ x[a][l], 16); \
    x[c][l] += x[d][l];                    \
    x[b][l] = rotl(x[b][l] ^ x[c][l], 12); \
    x[a][l] += x[b][l];                    \
    x[d][l] = rotl(x[d][l] ^ x[a][l], 8);  \
    x[c][l] += x[d][l];                    \
    x[b][l] = rotl(x[b][l] ^ x[c][l], 7);  \
  }
    DPRL_CHACHA_DOUBLE_ROUND(DPRL_CHACHA_QR)
#undef DPRL_CHACHA_QR
  }
  for (int l = 0; l < kLanes; ++l)
    for (int w = 0; w < 16; ++w) out[16 * l + w] = x[w][l] + in[w][l];
}

#if defined(__AVX2__)
// AVX2: the 12- and 7-bit rotations by shifts; the 16- and 8-bit ones are byte shuffles. (Left to
// the compiler, the lane loops above vectorise at -O2 but not at -O3, where they run three times
// slower.)
inline __m256i rotl_v(__m256i x, int n) {
  return _mm256_or_si256(_mm256_slli_epi32(x, n), _mm256_srli_epi32(x, 32 - n));
}

#endif

// How a sixteen-block kernel writes its output.
//   kWordMajor   out[16 w + l] = word w of block base + l, every word fed forward (RFC 8439).
//   kChacha8Rand ChaCha8Rand's order (C2SP): blocks in groups of four, word w of the four blocks
//                of group q at out[64 q + 4 w .. + 3], and no feed-forward of the constants
//                (words 0-3) and the counter (word 12), which the specification subtracts.
enum class Layout { kWordMajor, kChacha8Rand };

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DPRL_CHACHA_AVX512 1
// Sixteen blocks in one pass: one AVX-512 register per state word, native 32-bit rotations.
// (GCC 12 reports the unused pass-through operand inside _mm512_rol_epi32 as uninitialised.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
template <int kDoubleRounds, Layout kLayout>
__attribute__((target("avx512f"))) void chacha_avx512(const std::array<std::uint32_t, 8>& key,
                                                      std::uint32_t base, std::uint32_t* out) {
  const std::array<std::uint32_t, 16> words = chacha_key_words(key);
  __m512i in[16], x[16];
  for (int w = 0; w < 16; ++w) in[w] = _mm512_set1_epi32(static_cast<int>(words[w]));
  in[12] =
      _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(base)),
                       _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  for (int w = 0; w < 16; ++w) x[w] = in[w];
#define DPRL_CHACHA_QR512(a, b, c, d)                        \
  x[a] = _mm512_add_epi32(x[a], x[b]);                       \
  x[d] = _mm512_rol_epi32(_mm512_xor_si512(x[d], x[a]), 16); \
  x[c] = _mm512_add_epi32(x[c], x[d]);                       \
  x[b] = _mm512_rol_epi32(_mm512_xor_si512(x[b], x[c]), 12); \
  x[a] = _mm512_add_epi32(x[a], x[b]);                       \
  x[d] = _mm512_rol_epi32(_mm512_xor_si512(x[d], x[a]), 8);  \
  x[c] = _mm512_add_epi32(x[c], x[d]);                       \
  x[b] = _mm512_rol_epi32(_mm512_xor_si512(x[b], x[c]), 7);
  for (int round = 0; round < kDoubleRounds; ++round) {
    DPRL_CHACHA_DOUBLE_ROUND(DPRL_CHACHA_QR512)
  }
#undef DPRL_CHACHA_QR512
  for (int w = 0; w < 16; ++w) {
    if constexpr (kLayout == Layout::kWordMajor) {
      _mm512_storeu_si512(out + 16 * w, _mm512_add_epi32(x[w], in[w]));
    } else {
      const __m512i v = (w < 4 || w == 12) ? x[w] : _mm512_add_epi32(x[w], in[w]);
      auto* o = reinterpret_cast<__m128i*>(out + 4 * w);
      _mm_storeu_si128(o, _mm512_extracti32x4_epi32(v, 0));
      _mm_storeu_si128(o + 16, _mm512_extracti32x4_epi32(v, 1));
      _mm_storeu_si128(o + 32, _mm512_extracti32x4_epi32(v, 2));
      _mm_storeu_si128(o + 48, _mm512_extracti32x4_epi32(v, 3));
    }
  }
}
#pragma GCC diagnostic pop
#endif

#if defined(__AVX2__)
// Eight blocks (base .. base + 7). Word-major: out[16 w + l] is word w of block base + l (row
// stride 16, the caller runs the other eight into out + 8). ChaCha8Rand: the two groups of four
// at their places for base 0 or 8 (out is the whole 256-word buffer).
template <int kDoubleRounds, Layout kLayout>
void chacha_avx2(const std::array<std::uint32_t, 8>& key, std::uint32_t base, std::uint32_t* out) {
  const __m256i rot16 = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3,
                                         0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
  const __m256i rot8 = _mm256_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0,
                                        1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14);
  const std::array<std::uint32_t, 16> words = chacha_key_words(key);
  __m256i in[16], x[16];
  for (int w = 0; w < 16; ++w) in[w] = _mm256_set1_epi32(static_cast<int>(words[w]));
  in[12] = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(base)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  for (int w = 0; w < 16; ++w) x[w] = in[w];
  auto qr = [&](int a, int b, int c, int d) {
    x[a] = _mm256_add_epi32(x[a], x[b]);
    x[d] = _mm256_shuffle_epi8(_mm256_xor_si256(x[d], x[a]), rot16);
    x[c] = _mm256_add_epi32(x[c], x[d]);
    x[b] = rotl_v(_mm256_xor_si256(x[b], x[c]), 12);
    x[a] = _mm256_add_epi32(x[a], x[b]);
    x[d] = _mm256_shuffle_epi8(_mm256_xor_si256(x[d], x[a]), rot8);
    x[c] = _mm256_add_epi32(x[c], x[d]);
    x[b] = rotl_v(_mm256_xor_si256(x[b], x[c]), 7);
  };
  for (int round = 0; round < kDoubleRounds; ++round) {
#define DPRL_CHACHA_QR256(a, b, c, d) qr(a, b, c, d);
    DPRL_CHACHA_DOUBLE_ROUND(DPRL_CHACHA_QR256)
#undef DPRL_CHACHA_QR256
  }
  for (int w = 0; w < 16; ++w) {
    if constexpr (kLayout == Layout::kWordMajor) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16 * w), _mm256_add_epi32(x[w], in[w]));
    } else {
      const __m256i v = (w < 4 || w == 12) ? x[w] : _mm256_add_epi32(x[w], in[w]);
      auto* o = reinterpret_cast<__m128i*>(out + 64 * (base / 4) + 4 * w);
      _mm_storeu_si128(o, _mm256_extracti128_si256(v, 0));
      _mm_storeu_si128(o + 16, _mm256_extracti128_si256(v, 1));
    }
  }
}
#endif

}  // namespace

void chacha20_blocks16_word_major(const std::array<std::uint32_t, 8>& key, std::uint32_t base,
                                  std::uint32_t* out) {
#if defined(DPRL_CHACHA_AVX512)
  if (cpu_has_avx512f()) return chacha_avx512<10, Layout::kWordMajor>(key, base, out);
#endif
  detail::chacha20_blocks16_word_major_avx2(key, base, out);
}

void detail::chacha20_blocks16_word_major_avx2(const std::array<std::uint32_t, 8>& key,
                                               std::uint32_t base, std::uint32_t* out) {
#if defined(__AVX2__)
  chacha_avx2<10, Layout::kWordMajor>(key, base, out);
  chacha_avx2<10, Layout::kWordMajor>(key, base + 8, out + 8);
#else
  std::uint32_t blocks[256];
  chacha20_lanes<16>(key, base, blocks);
  for (int l = 0; l < 16; ++l)
    for (int w = 0; w < 16; ++w) out[16 * w + l] = blocks[16 * l + w];
  std::memset(blocks, 0, sizeof(blocks));
#endif
}

namespace {
// One ChaCha8Rand iteration without AVX2: sixteen scalar blocks, then the specification's
// subtractions and order.
void chacha8rand_scalar(const std::array<std::uint32_t, 8>& key, std::uint64_t* out) {
  std::uint32_t words[256];
  const std::array<std::uint32_t, 16> in = chacha_key_words(key);
  for (std::uint32_t b = 0; b < 16; ++b) {
    std::array<std::uint32_t, 16> blk;
    chacha_block(key, b, {0, 0, 0}, 4, blk);
    for (int w : {0, 1, 2, 3}) blk[w] -= in[w];
    blk[12] -= b;
    for (int w = 0; w < 16; ++w) words[64 * (b / 4) + 4 * w + b % 4] = blk[w];
  }
  std::memcpy(out, words, sizeof(words));
}
}  // namespace

void chacha8rand_iteration(const std::array<std::uint32_t, 8>& key, std::uint64_t* out) {
#if defined(DPRL_CHACHA_AVX512)
  if (cpu_has_avx512f())
    return chacha_avx512<4, Layout::kChacha8Rand>(key, 0, reinterpret_cast<std::uint32_t*>(out));
#endif
  detail::chacha8rand_iteration_avx2(key, out);
}

void detail::chacha8rand_iteration_avx2(const std::array<std::uint32_t, 8>& key,
                                        std::uint64_t* out) {
#if defined(__AVX2__)
  // the kernels write through vector stores only, which may alias the 64-bit words
  chacha_avx2<4, Layout::kChacha8Rand>(key, 0, reinterpret_cast<std::uint32_t*>(out));
  chacha_avx2<4, Layout::kChacha8Rand>(key, 8, reinterpret_cast<std::uint32_t*>(out));
#else
  chacha8rand_scalar(key, out);
#endif
}

void detail::chacha8rand_iteration_scalar(const std::array<std::uint32_t, 8>& key,
                                          std::uint64_t* out) {
  chacha8rand_scalar(key, out);
}

Chacha8Rand::Chacha8Rand(const std::array<std::uint32_t, 8>& seed) { restore(seed, 0); }

void Chacha8Rand::restore(const std::array<std::uint32_t, 8>& key, std::uint32_t pos) {
  if (pos > kOutput) throw DataError(fmt::format("ChaCha8Rand: position {} > {}", pos, kOutput));
  key_ = key;
  chacha8rand_iteration(key_, buf_);
  pos_ = pos;
}

void Chacha8Rand::refill() {
  // the last 32 bytes of the iteration are the next one's input
  std::memcpy(key_.data(), buf_ + kOutput, sizeof(key_));
  chacha8rand_iteration(key_, buf_);
  pos_ = 0;
}

void Chacha20Rng::fill(std::uint64_t* out, std::size_t n) {
  // a forked child rekeys before its first word, as in next_u64
  if (chacha20_fork_generation.load(std::memory_order_relaxed) != fork_generation_) refill();
  while (n > 0) {
    if (pos_ == kWords) refill();
    const std::size_t take = std::min<std::size_t>(n, static_cast<std::size_t>(kWords - pos_));
    std::memcpy(out, buf_ + 2 * pos_, take * sizeof(std::uint64_t));
    pos_ += static_cast<int>(take);
    out += take;
    n -= take;
  }
}

void Chacha20Rng::refill() {
  if (refills_ >= (1u << 20) ||
      chacha20_fork_generation.load(std::memory_order_relaxed) != fork_generation_)
    rekey_from_os();
  ++refills_;
  // each refill uses a fresh key, so the counter restarts at 0 with a zero nonce; the output is
  // in word-major order (word w of block l at 16 w + l), a fixed permutation of the keystream
  static_assert(kBlocks == 16);
  chacha20_blocks16_word_major(key_, 0, buf_);
  // fast key erasure: the first 32 bytes (word 0 of blocks 0-7) become the next key and are
  // never output
  std::memcpy(key_.data(), buf_, sizeof(key_));
  std::memset(buf_, 0, sizeof(key_));
  pos_ = 4;  // 64-bit words 0..3 of buf_ held the new key
}

#undef DPRL_CHACHA_DOUBLE_ROUND

}  // namespace dprl::privacy
