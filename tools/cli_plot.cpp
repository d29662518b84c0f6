#include "tools/cli.hpp"

namespace dprl::cli {

void add_plot_command(CLI::App&) {}

}  // namespace dprl::cli
