#include "engine/error.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace dprl {

namespace {

// The length of the valid UTF-8 sequence at text[i] (0: invalid), and its code point.
std::size_t utf8_sequence(std::string_view text, std::size_t i, char32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char c = b(0);
  std::size_t n = 0;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4, cp = c & 0x07;
  else
    return 0;
  if (i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3f);
  }
  // overlong forms, surrogates, beyond U+10FFFF
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x80) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else {
      char32_t cp = 0;
      const std::size_t n = utf8_sequence(text, i, cp);
      // C1 controls; line and paragraph separators and bidirectional overrides, which reorder
      // or split what is shown
      const bool control = (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x2028 && cp <= 0x202e) ||
                           (cp >= 0x2066 && cp <= 0x2069);
      if (n == 0 || control) {
        for (std::size_t k = 0; k < (n == 0 ? 1 : n); ++k)
          out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i + k]));
        i += n == 0 ? 1 : n;
      } else {
        out.append(text.substr(i, n));
        i += n;
      }
    }
  }
  return out;
}

void check_failed(const char* cond, const char* file, int line) {
  std::fprintf(stderr, "dprl: internal check failed: %s at %s:%d\n", cond, file, line);
  std::abort();
}

}  // namespace dprl
