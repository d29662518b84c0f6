// dprl report: one self-contained HTML page per run directory or sweep directory (docs/report.md).
//
// A run directory (summary.json; what dprl run writes) gets a page with, in order: its key
// figures beside an animation of its saved policy (policy.json or policy.bin, one episode of the
// config's env with seed kReportEpisodeSeed, at most kReportMaxSteps steps, drawn by the env's
// renderer and played by the page's script; when the policy or env cannot be loaded or drawn the
// page says why), the privacy record of summary.json in plain words (or the statement that the
// run is not private), epsilon over training (metrics.csv's epsilon column and the charges of
// privacy_ledger.json when present), the audit's lower bound beside the claim when summary.json
// has an audit, the learning curves of metrics.csv, timing.json, the resolved config.yaml and the
// run's files. A sweep directory (sweep.csv; what dprl sweep writes) gets a page comparing its
// configurations (a table and curves with 95% seed bands, tools/svg_plot.hpp) that links every
// run's own page, which it writes as <run>/report.html.
//
// The page fetches nothing: its SVG, CSS and script are inline, and its only links are relative
// ones to the run pages and files. Every text taken from the files is escaped. Pages are written
// atomically (engine/io.hpp). The output depends only on the directory's files: no clock, no host.
//
// Errors (one-line dprl::Error naming the path): dir missing or not a folder, neither a run nor a
// sweep directory, a summary.json or sweep.csv that cannot be read or parsed, an output path whose
// folder does not exist or that is a folder, or a write that fails. Sections that cannot be built
// from optional files (metrics.csv, timing.json, the ledger, the policy) say so on the page.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>

namespace dprl::tools {

inline constexpr std::uint64_t kReportEpisodeSeed = 0;  // the animated episode's seed
inline constexpr std::int64_t kReportMaxSteps = 500;    // steps drawn at most

struct ReportResult {
  std::filesystem::path page;  // the page written
  bool sweep = false;          // a sweep directory's page
  std::size_t run_pages = 0;   // run pages written (1 for a run directory)
};

// Writes the report of dir to out (empty: dir/report.html).
ReportResult write_report(const std::filesystem::path& dir, const std::filesystem::path& out = {});

}  // namespace dprl::tools
