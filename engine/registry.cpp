#include "engine/registry.hpp"

#include <fmt/format.h>

namespace dprl {

std::string join_names(const std::vector<std::string>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}

void throw_unknown_name(std::string_view kind, std::string_view name,
                        const std::vector<std::string>& valid) {
  throw UnknownName(fmt::format("unknown {} '{}'; valid: {}", kind, name, join_names(valid)));
}

}  // namespace dprl
