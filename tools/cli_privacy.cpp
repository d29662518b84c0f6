#include "tools/cli.hpp"

namespace dprl::cli {

void add_privacy_commands(CLI::App&) {}

}  // namespace dprl::cli
