// ChaCha20 block function (RFC 8439, section 2.3) and a fast-key-erasure generator keyed from the
// operating system.
//
// Chacha20Rng draws its 256-bit key from getrandom(2), produces 16 ChaCha20 blocks per refill,
// and immediately overwrites its key with the first 32 bytes of each refill's output (Bernstein's
// fast-key-erasure construction), so a later compromise of the state reveals no earlier output.
// It rekeys from getrandom after 2^20 refills and in a forked child: a pthread_atfork hook counts
// forks, and every draw compares that count with the one at the last keying, so a child discards
// the words its parent had buffered but not yet used and never repeats its parent's stream. The
// output is computationally indistinguishable from uniform under the standard ChaCha20 assumption;
// it replaces one system call per 512 bytes by one per 1 GiB of output, which is what makes
// OS-entropy noise the affordable default.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace dprl::privacy {

// One 64-byte ChaCha20 block for (key, counter, nonce), as 16 little-endian words.
void chacha20_block(const std::array<std::uint32_t, 8>& key, std::uint32_t counter,
                    const std::array<std::uint32_t, 3>& nonce, std::array<std::uint32_t, 16>& out);
// The same with double_rounds double rounds (10: ChaCha20; 4: ChaCha8).
void chacha_block(const std::array<std::uint32_t, 8>& key, std::uint32_t counter,
                  const std::array<std::uint32_t, 3>& nonce, int double_rounds,
                  std::array<std::uint32_t, 16>& out);

// Sixteen consecutive blocks (counters base .. base + 15, zero nonce) in word-major order:
// out[16 w + l] is word w of block base + l, so each state word of the sixteen blocks is one
// vector store (AVX-512 where the processor has it, checked at run time; two AVX2 halves
// otherwise). The generator below uses this layout: a fixed permutation of the keystream.
void chacha20_blocks16_word_major(const std::array<std::uint32_t, 8>& key, std::uint32_t base,
                                  std::uint32_t* out);
namespace detail {
// The same without AVX-512 (what a processor without it runs; public for tests).
void chacha20_blocks16_word_major_avx2(const std::array<std::uint32_t, 8>& key, std::uint32_t base,
                                       std::uint32_t* out);
}  // namespace detail

// One iteration of ChaCha8Rand (C2SP's specification "ChaCha8Rand", the generator behind Go's
// math/rand/v2): sixteen ChaCha8 blocks of key with counters 0-15 and a zero nonce, without the
// feed-forward of the constants and the counter, in groups of four blocks interleaved word by
// word; out[0..124) are the output words (little-endian 64-bit), out[124..128) the next key.
void chacha8rand_iteration(const std::array<std::uint32_t, 8>& key, std::uint64_t* out);
namespace detail {
void chacha8rand_iteration_avx2(const std::array<std::uint32_t, 8>& key, std::uint64_t* out);
void chacha8rand_iteration_scalar(const std::array<std::uint32_t, 8>& key, std::uint64_t* out);
}  // namespace detail

// The ChaCha8Rand generator, for reproducible bulk randomness (the seeded noise source's
// normals): 124 words per iteration at about a third of ChaCha20's cost. Its state is the key
// of the current iteration and the position in it (the specification's 33-byte form), so a
// checkpoint restores it exactly. Seeded, so NOT secret: never for a formal release.
class Chacha8Rand {
 public:
  static constexpr std::uint32_t kOutput = 124;                    // output words per iteration
  explicit Chacha8Rand(const std::array<std::uint32_t, 8>& seed);  // the 32-byte seed, LE words
  std::uint64_t next_u64() {
    if (pos_ == kOutput) refill();
    ++drawn_;
    return buf_[pos_++];
  }
  // The next min(max, words left in this iteration) words (at least one when max > 0), consumed;
  // valid until the next draw.
  std::span<const std::uint64_t> take(std::size_t max) {
    if (pos_ == kOutput) refill();
    const std::size_t n = std::min<std::size_t>(max, kOutput - pos_);
    const std::span<const std::uint64_t> out(buf_ + pos_, n);
    pos_ += static_cast<std::uint32_t>(n);
    drawn_ += n;
    return out;
  }
  const std::array<std::uint32_t, 8>& key() const { return key_; }
  std::uint32_t position() const { return pos_; }
  // Words handed out by this object (next_u64 and take) since it was made: a statistic for
  // benchmarks, not part of the stream's state (restore() leaves it alone).
  std::uint64_t words_drawn() const { return drawn_; }
  // Back to (key, position) as returned above (DataError for a position past kOutput).
  void restore(const std::array<std::uint32_t, 8>& key, std::uint32_t pos);

 private:
  void refill();
  std::array<std::uint32_t, 8> key_{};  // the input of the current iteration
  alignas(64) std::uint64_t buf_[128];
  std::uint32_t pos_ = 0;
  std::uint64_t drawn_ = 0;
};

// Forks of this process so far, as seen by the process (incremented in each child).
extern std::atomic<std::uint64_t> chacha20_fork_generation;

class Chacha20Rng {
 public:
  Chacha20Rng();  // keyed from getrandom (Error when the system call fails)
  std::uint64_t next_u64() {
    // a forked child rekeys before its first draw (refill checks the generation too)
    if (pos_ == kWords ||
        chacha20_fork_generation.load(std::memory_order_relaxed) != fork_generation_)
      refill();
    std::uint64_t v;
    std::memcpy(&v, buf_ + 2 * pos_++, sizeof v);
    return v;
  }
  // out[0..n) = n successive next_u64() values.
  void fill(std::uint64_t* out, std::size_t n);

 private:
  static constexpr int kBlocks = 16;
  static constexpr int kWords = kBlocks * 8;  // 64-bit words per refill, the key words included
  void rekey_from_os();
  void refill();
  std::array<std::uint32_t, 8> key_{};
  alignas(64) std::uint32_t buf_[2 * kWords];  // 16 blocks, word-major
  int pos_ = kWords;
  std::uint32_t refills_ = 0;
  std::uint64_t fork_generation_ = 0;
};

}  // namespace dprl::privacy
