#pragma once
// FNV-1a 64 (Fowler, Noll and Vo), the checksum of dprl's file formats: ledgers, tabular
// policies, network files, checkpoints and collection caches. It detects truncation and
// corruption, not tampering.

#include <cstdint>
#include <string_view>

namespace dprl {

// The FNV offset basis: ledgers and tabular policy files.
inline constexpr std::uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ULL;
// Network files (DPRLNN), checkpoints (DPRLCKPT) and collection caches were first written with
// 1469598103934665603, the decimal basis 14695981039346656037 one digit short. Their formats keep
// it as their seed, so every file saved so far still loads.
inline constexpr std::uint64_t kFnvBasisShort = 1469598103934665603ULL;

// Raw memory (a vector of doubles, say) as std::string_view{reinterpret_cast<const char*>(p), n}.
inline std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t basis = kFnvOffsetBasis) {
  std::uint64_t h = basis;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace dprl
