#include "tools/cli.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "engine/error.hpp"
#include "engine/version.hpp"
#include "tools/mpi_sweep.hpp"

namespace dprl::cli {

namespace {

// A parallel launch (mpirun, srun) is for `dprl sweep` in a build with MPI only; rank 0 says why.
bool refuse_parallel_launch(int argc, char** argv) {
  const int n = launch_size();
  if (n <= 1) return false;
#ifdef DPRL_MPI
  if (argc > 1 &&
      (std::string_view(argv[1]) == "sweep" || std::string_view(argv[1]) == "population"))
    return false;
  if (launch_rank() == 0)
    fmt::print(stderr,
               "dprl: launched as one of {} processes (mpirun or srun), but only 'dprl sweep' "
               "and 'dprl population' run over MPI\n",
               n);
#else
  if (launch_rank() == 0)
    fmt::print(stderr,
               "dprl: launched as one of {} processes (mpirun or srun), but this dprl was built "
               "without MPI (install Open MPI and rebuild, see scripts/setup.sh, or run it without "
               "mpirun)\n",
               n);
#endif
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (refuse_parallel_launch(argc, argv)) return 2;
  CLI::App app{"dprl: differentially private reinforcement learning engine"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("dprl {}", kVersion));
  add_env_commands(app);
  add_bench_offline_command(app);
  add_bench_noise_command(app);
  add_run_commands(app);
  add_plot_command(app);
  add_render_command(app);
  add_report_command(app);
  add_privacy_commands(app);
  add_primorl_bench(app);
  add_dataset_commands(app);
  add_population_commands(app);
  add_agreement_command(app);
  add_audit_commands(app);
  // an unknown first word would otherwise be reported as "A subcommand is required"
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      fmt::print(stderr, "dprl: unknown command '{}'; valid: {}\n", printable(argv[1]),
                 fmt::join(names, ", "));
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const ExitStatus& e) {
    std::fflush(stdout);
    return e.code;
  } catch (const CLI::ParseError& e) {
    // one line, like every other error
    std::string msg = e.what();
    for (char& c : msg)
      if (c == '\n') c = ' ';
    fmt::print(stderr, "dprl: {} (see dprl --help)\n", printable(msg));
    return 2;
  } catch (const dprl::Error& e) {
    std::fflush(stdout);
    fmt::print(stderr, "dprl: {}\n", printable(e.what()));
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "dprl: error: {}\n", printable(e.what()));
    return 2;
  }
  return 0;
}

}  // namespace dprl::cli
