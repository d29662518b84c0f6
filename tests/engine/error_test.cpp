// dprl::printable: untrusted text made safe for a one-line message.
#include "engine/error.hpp"

#include <doctest/doctest.h>

#include <string>

using dprl::printable;

TEST_SUITE("unit") {
  TEST_CASE("printable keeps printable ASCII and UTF-8 and escapes everything a terminal acts on") {
    CHECK(printable("dprl: c.yaml:7:12: unknown key 'x'") == "dprl: c.yaml:7:12: unknown key 'x'");
    CHECK(printable("gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80") ==
          "gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80");  // ü ß € and an emoji
    // C0 controls (ESC clears the screen, CR and LF split the line), DEL
    CHECK(printable("a\x1b[2Jb") == "a\\x1b[2Jb");
    CHECK(printable("a\r\nb\tc") == "a\\x0d\\x0ab\\x09c");
    CHECK(printable(std::string("a\0b", 3)) == "a\\x00b");
    CHECK(printable("\x7f") == "\\x7f");
    // C1 controls in UTF-8 (U+009B is the one-byte CSI), line separators, bidirectional overrides
    CHECK(printable("x\xc2\x9b"
                    "2Jy") == "x\\xc2\\x9b2Jy");
    CHECK(printable("\xe2\x80\xa8") == "\\xe2\\x80\\xa8");
    CHECK(printable("a\xe2\x80\xae"
                    "b") == "a\\xe2\\x80\\xaeb");
    CHECK(printable("\xe2\x81\xa6") == "\\xe2\\x81\\xa6");
    // bytes that are not UTF-8: a lone continuation, a truncated sequence, overlong forms,
    // surrogates, beyond U+10FFFF
    CHECK(printable("\x80") == "\\x80");
    CHECK(printable("a\xe2\x82") == "a\\xe2\\x82");
    CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");
    CHECK(printable("\xe0\x80\xaf") == "\\xe0\\x80\\xaf");
    CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");
    CHECK(printable("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");
    CHECK(printable("\xff\xfe") == "\\xff\\xfe");
    CHECK(printable("") == "");
  }
}
