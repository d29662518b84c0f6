// The two steps every snapped release applies to its input (secure_release.hpp): the values must
// be finite, and each is rounded to the grid before the noise, a multiple of the grid, is added.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "engine/error.hpp"

namespace dprl::privacy {

// A snapped release refuses values that are not finite (their grid point is undefined).
inline void check_finite_release(std::span<const double> values) {
  // a value is NaN or infinite when its exponent bits are all ones; counted without a branch per
  // value, so that the loop vectorises
  constexpr std::uint64_t kExponent = 0x7ff0000000000000;
  std::uint64_t bad = 0;
  for (double v : values) bad += (std::bit_cast<std::uint64_t>(v) & kExponent) == kExponent;
  if (bad != 0) throw ParamError("private release: input value is not finite");
}

// snap_to_grid(v, g) (secure_sampling.hpp) with v * (1 / g) for v / g, equal for a normal
// power-of-two g (|v| < 2^53 g keeps the quotient finite; above it v is a multiple of g already),
// and branch-free so that loops over it vectorise: inv_g = 1 / g, big = 2^53 g.
inline double snap_scaled(double v, double g, double inv_g, double big) {
  return std::fabs(v) >= big ? v : std::nearbyint(v * inv_g) * g;
}

// An integer below 2^51 in magnitude as a double, exactly: its bits added to those of 2^52 + 2^51
// (AVX2 has no 64-bit integer conversion; this is one add and one subtraction).
inline double small_int_to_double(std::int64_t x) {
  return std::bit_cast<double>(x + 0x4338000000000000) - 0x1.8p52;
}

// v[i] = snap_scaled(v[i], g, ...) + e[i] for every i (e: noise already on the grid), and the same
// with g * steps[i] for integer steps below 2^51 in magnitude. Four values at a time with AVX2:
// the same IEEE operations as the scalar form (round to nearest even in the current mode, without
// exceptions, is nearbyint), so the same bits; GCC does not vectorise the scalar loop.
namespace detail {
template <class Term>
inline void snap_and_add(std::span<double> v, double g, Term term) {
  const double inv_g = 1.0 / g, big = 0x1p53 * g;
  std::size_t i = 0;
#if defined(__AVX2__)
  const __m256d vg = _mm256_set1_pd(g), vinv = _mm256_set1_pd(inv_g), vbig = _mm256_set1_pd(big);
  const __m256d sign = _mm256_set1_pd(-0.0);
  for (; i + 4 <= v.size(); i += 4) {
    const __m256d x = _mm256_loadu_pd(v.data() + i);
    const __m256d r = _mm256_mul_pd(
        _mm256_round_pd(_mm256_mul_pd(x, vinv), _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC), vg);
    const __m256d keep = _mm256_cmp_pd(_mm256_andnot_pd(sign, x), vbig, _CMP_GE_OQ);
    _mm256_storeu_pd(v.data() + i, _mm256_add_pd(_mm256_blendv_pd(r, x, keep), term.vec(i)));
  }
#endif
  for (; i < v.size(); ++i) v[i] = snap_scaled(v[i], g, inv_g, big) + term.one(i);
}
}  // namespace detail

inline void snap_and_add(std::span<double> v, const double* e, double g) {
  struct Term {
    const double* e;
    double one(std::size_t i) const { return e[i]; }
#if defined(__AVX2__)
    __m256d vec(std::size_t i) const { return _mm256_loadu_pd(e + i); }
#endif
  };
  detail::snap_and_add(v, g, Term{e});
}

inline void snap_and_add_steps(std::span<double> v, const std::int64_t* steps, double g) {
  struct Term {
    const std::int64_t* s;
    double g;
    double one(std::size_t i) const { return g * small_int_to_double(s[i]); }
#if defined(__AVX2__)
    __m256d vec(std::size_t i) const {
      const __m256i k = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
      const __m256d d =
          _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(
                            k, _mm256_set1_epi64x(static_cast<long long>(0x4338000000000000)))),
                        _mm256_set1_pd(0x1.8p52));
      return _mm256_mul_pd(_mm256_set1_pd(g), d);
    }
#endif
  };
  detail::snap_and_add(v, g, Term{steps, g});
}

}  // namespace dprl::privacy
