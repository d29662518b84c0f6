// Small helpers shared by the CLI command files.
#pragma once

#include <string>
#include <vector>

#include "engine/params.hpp"

namespace dprl::cli {

// "k=v" flags into a ParamMap (where = "<flag> k=v"); throws ParamError on a missing '='.
ParamMap parse_param_flags(const std::vector<std::string>& flags, const std::string& flag);

}  // namespace dprl::cli
