#include "engine/limits.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>

#include "engine/error.hpp"

namespace dprl {

std::uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

void check_memory(std::string_view what, double bytes) {
  const double have = static_cast<double>(physical_memory_bytes());
  if (std::isfinite(bytes) && (have == 0 || bytes <= have)) return;
  throw ParamError(fmt::format("{}: needs {:.3g} GB, more than this machine's {:.3g} GB of memory",
                               what, bytes / 1e9, have / 1e9));
}

}  // namespace dprl
