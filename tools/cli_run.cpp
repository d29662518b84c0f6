#include "tools/cli.hpp"

namespace dprl::cli {

void add_run_commands(CLI::App&) {}

}  // namespace dprl::cli
