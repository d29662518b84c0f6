// Processor features checked at run time, for kernels compiled for more than the build's -march
// (a function with __attribute__((target(...))) called only when its feature is present).
#pragma once

namespace dprl {

// AVX-512 Foundation (x86-64 with GCC or Clang; false elsewhere). Checked once.
inline bool cpu_has_avx512f() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool have = __builtin_cpu_supports("avx512f");
  return have;
#else
  return false;
#endif
}

}  // namespace dprl
