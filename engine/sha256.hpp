// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits.
//
// Used for content hashes that name what produced a file: a run directory records the SHA-256 of
// its resolved config (the bytes of config.yaml), so `sha256sum config.yaml` gives the same digest.
// Tested against the FIPS 180-4 / NIST example messages. Not for secrets: no constant-time claims.
#pragma once

#include <string>
#include <string_view>

namespace dprl {

std::string sha256_hex(std::string_view bytes);

}  // namespace dprl
