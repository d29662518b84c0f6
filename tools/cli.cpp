#include "tools/cli.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "engine/error.hpp"

namespace dprl::cli {

int main(int argc, char** argv) {
  CLI::App app{"dprl: differentially private reinforcement learning engine"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dprl 0.1.0");
  add_env_commands(app);
  add_run_commands(app);
  add_plot_command(app);
  add_privacy_commands(app);
  add_primorl_bench(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // one line, like every other error
    std::string msg = e.what();
    for (char& c : msg)
      if (c == '\n') c = ' ';
    fmt::print(stderr, "dprl: {} (see dprl --help)\n", msg);
    return 2;
  } catch (const dprl::Error& e) {
    std::fflush(stdout);
    fmt::print(stderr, "dprl: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "dprl: error: {}\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace dprl::cli
