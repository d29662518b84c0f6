// The `dprl` command-line tool: one file per command group, wired together in cli.cpp.
//
// Every command throws dprl::Error on bad input; cli::main prints one line "dprl: <message>" on
// stderr and exits 2 (1 for usage errors reported by CLI11).
#pragma once

#include <CLI/CLI.hpp>

namespace dprl::cli {

int main(int argc, char** argv);

void add_env_commands(CLI::App& app);      // envs, env replay, bench env, eval
void add_run_commands(CLI::App& app);      // run, sweep
void add_plot_command(CLI::App& app);      // plot
void add_privacy_commands(CLI::App& app);  // privacy epsilon|noise|gaussian|compose|...
void add_primorl_bench(CLI::App& app);     // bench primorl (after add_env_commands)

}  // namespace dprl::cli
