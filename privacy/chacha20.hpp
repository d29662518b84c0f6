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

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace dprl::privacy {

// One 64-byte ChaCha20 block for (key, counter, nonce), as 16 little-endian words.
void chacha20_block(const std::array<std::uint32_t, 8>& key, std::uint32_t counter,
                    const std::array<std::uint32_t, 3>& nonce, std::array<std::uint32_t, 16>& out);

// Eight consecutive blocks (counters base .. base + 7, zero nonce) into out[0..127], computed
// side by side so the compiler vectorises them; equal to eight chacha20_block calls.
void chacha20_blocks8(const std::array<std::uint32_t, 8>& key, std::uint32_t base,
                      std::uint32_t* out);

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
    return buf_[pos_++];
  }
  // out[0..n) = n successive next_u64() values.
  void fill(std::uint64_t* out, std::size_t n);

 private:
  static constexpr int kBlocks = 16;
  static constexpr int kWords = kBlocks * 8;  // 64-bit words per refill, the key words included
  void rekey_from_os();
  void refill();
  std::array<std::uint32_t, 8> key_{};
  std::uint64_t buf_[kWords];
  int pos_ = kWords;
  std::uint32_t refills_ = 0;
  std::uint64_t fork_generation_ = 0;
};

}  // namespace dprl::privacy
