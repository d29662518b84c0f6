// `dprl report RUN_DIR|SWEEP_DIR [--out FILE.html]`: one self-contained HTML page of a run or a
// sweep (tools/html_report.hpp builds it; docs/report.md explains the page).
#include <fmt/format.h>

#include <memory>
#include <string>

#include "tools/cli.hpp"
#include "tools/html_report.hpp"

namespace dprl::cli {

void add_report_command(CLI::App& app) {
  struct Opts {
    std::string dir, out;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "report",
      "one self-contained HTML page of a run or sweep directory: config, curves, privacy record "
      "in plain words, timing and the policy at work (docs/report.md)");
  cmd->add_option("DIR", o->dir, "run directory (summary.json) or sweep directory (sweep.csv)")
      ->required();
  cmd->add_option("--out", o->out, "output HTML file (default: DIR/report.html)");
  cmd->callback([o] {
    const tools::ReportResult r = tools::write_report(o->dir, o->out);
    if (r.sweep)
      fmt::print("wrote {} (a sweep page and {} run pages)\n", r.page.string(), r.run_pages);
    else
      fmt::print("wrote {}\n", r.page.string());
  });
}

}  // namespace dprl::cli
