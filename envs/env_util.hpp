// Small helpers shared by the built-in envs: one-line errors for bad actions and states, and the
// numerics that bit-exact parity with Python references needs (Python's x**2, float32 rounding,
// store barriers).
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/space.hpp"

namespace dprl::envs {

// glibc pow(x, y) with y hidden from the compiler, which would otherwise fold pow(x, 2) into x * x.
inline double opaque_pow(double x, double y) {
#if defined(__x86_64__)
  asm("" : "+x"(y));
#else
  asm("" : "+m"(y));
#endif
  return std::pow(x, y);
}

// Python's x**2 for floats, bit for bit: glibc pow(x, 2.0), which differs from the correctly
// rounded x * x in about 0.08% of cases (measured on 3e8 arguments), when x^2 lies within about
// 2^-10 ulp of a rounding midpoint. glibc's pow (Arm's optimized-routines code) has a worst-case
// error of 0.54 ulp, so whenever the exact square is within 7/16 ulp of hi = x * x (|lo| below,
// lo from an exact fma) no other double is within 0.54 ulp of it and pow must return hi; only the
// remaining ~12% of arguments call pow. Powers of two as hi (whose lower neighbour is closer) and
// non-finite values also go to pow.
inline double py_square(double x) {
#if !defined(__FMA__)
  return opaque_pow(x, 2.0);  // without hardware fma the residual would cost more than pow
#endif
  const double hi = x * x;
  const double lo = std::fma(x, x, -hi);  // x * x == hi + lo exactly
  const auto bits = std::bit_cast<std::uint64_t>(hi);
  const double ulp = std::bit_cast<double>(bits & 0x7ff0000000000000ULL) * 0x1p-52;
  if ((bits & 0x000fffffffffffffULL) != 0 && std::fabs(lo) <= 0.4375 * ulp) return hi;
  return opaque_pow(x, 2.0);
}

// x rounded to float32 and back to double. The asm keeps the float value real: GCC 12.2 at -O3
// with -march=x86-64-v3 vectorizes a (double)(float)x round trip after an integer-to-double
// conversion into no rounding at all (seen in Acrobot's reset).
inline double round_to_float(double x) {
  float f = static_cast<float>(x);
#if defined(__x86_64__)
  asm("" : "+x"(f));
#else
  asm("" : "+m"(f));
#endif
  return f;
}

// Keeps the compiler from merging memory accesses across this point.
inline void compiler_barrier() { asm volatile("" ::: "memory"); }

// Throws InvalidAction: "<id>: action <a> is outside Discrete(n)".
[[noreturn]] void throw_bad_discrete_action(const EnvSpec& spec, std::int64_t action);

// Throws InvalidAction unless action has spec.action.dim() values and none is NaN.
void check_continuous_action(const EnvSpec& spec, std::span<const double> action);

// Throws ParamError unless s has n values, all finite.
void check_state(const EnvSpec& spec, std::span<const double> s, std::size_t n);

// Throws ParamError unless s is one finite integer in [0, n); returns it.
std::int64_t check_index_state(const EnvSpec& spec, std::span<const double> s, std::int64_t n);

}  // namespace dprl::envs
