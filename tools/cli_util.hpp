// Small helpers shared by the CLI command files.
#pragma once

#include <string>
#include <vector>

#include "engine/params.hpp"

namespace dprl::cli {

// "k=v" flags into a ParamMap (where = "<flag> k=v"); throws ParamError on a missing '='.
ParamMap parse_param_flags(const std::vector<std::string>& flags, const std::string& flag);

// `dprl env replay`: runs the replay case in text (CASE.json; file names it in errors) and
// returns the output JSON (one line). Every action is validated before the first step.
std::string replay_case(const std::string& text, const std::string& file);

// The median of v (the upper one for an even count); v is non-empty. The bench commands report it.
double median(std::vector<double> v);

}  // namespace dprl::cli
