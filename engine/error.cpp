#include "engine/error.hpp"

#include <cstdio>
#include <cstdlib>

namespace dprl {

void check_failed(const char* cond, const char* file, int line) {
  std::fprintf(stderr, "dprl: internal check failed: %s at %s:%d\n", cond, file, line);
  std::abort();
}

}  // namespace dprl
