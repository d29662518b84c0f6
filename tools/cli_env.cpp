#include "tools/cli.hpp"

namespace dprl::cli {

void add_env_commands(CLI::App&) {}

}  // namespace dprl::cli
