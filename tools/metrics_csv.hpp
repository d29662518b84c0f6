// Reader for a run directory's metrics.csv (engine/run_dir.hpp writes it).
//
// Format: a header row of column names, then one row per evaluation with the same number of
// comma-separated cells. Every cell is a number as std::from_chars reads it (also "nan", "inf");
// an empty cell is a missing value and reads as NaN (RunDir writes non-finite values that way).
// Surrounding spaces are ignored, "\r\n" line ends are accepted, blank lines are skipped, and a
// cell may be wrapped in double quotes ("" inside quotes is a literal quote). Anything else is a
// DataError whose message starts with "<file>:<line>:".
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dprl::tools {

struct MetricsTable {
  std::string source;                       // file name used in messages
  std::vector<std::string> columns;         // header, in file order
  std::vector<std::vector<double>> values;  // values[column][row]; NaN for empty cells

  std::size_t rows() const { return values.empty() ? 0 : values.front().size(); }
  // Index of a column, or nullopt.
  std::optional<std::size_t> find(std::string_view name) const;
  // dprl plot's x axis when --x is not given: step, else env_steps when the table has no step
  // column (then "step", which may be absent)
  std::string default_x() const {
    return !find("step") && find("env_steps") ? "env_steps" : "step";
  }
  // The column's values; throws ParamError "<flag>: unknown column '<name>' in <source>; valid:
  // a, b, c" when absent.
  const std::vector<double>& column(std::string_view name, std::string_view flag) const;
};

// Parses CSV text; source names the file in error messages.
MetricsTable parse_metrics_csv(std::string_view text, const std::string& source);
// Reads and parses a file; an unreadable file throws DataError naming it.
MetricsTable read_metrics_csv(const std::filesystem::path& path);

}  // namespace dprl::tools
