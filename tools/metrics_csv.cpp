#include "tools/metrics_csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>

#include "engine/error.hpp"
#include "engine/io.hpp"

namespace dprl::tools {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits one line into trimmed cells; quoted cells may contain commas and "" for a quote.
std::vector<std::string> split_cells(std::string_view line, std::string_view where) {
  std::vector<std::string> cells;
  std::size_t i = 0;
  for (;;) {
    std::string cell;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i < line.size() && line[i] == '"') {
      ++i;
      for (;;) {
        if (i >= line.size()) throw DataError(fmt::format("{}: unterminated quoted cell", where));
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            cell += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        cell += line[i++];
      }
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i < line.size() && line[i] != ',')
        throw DataError(fmt::format("{}: unexpected text after a quoted cell", where));
    } else {
      const std::size_t end = std::min(line.find(',', i), line.size());
      cell = std::string(trim(line.substr(i, end - i)));
      i = end;
    }
    cells.push_back(std::move(cell));
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  return cells;
}

bool parse_number(std::string_view s, double& out) {
  if (s.empty()) {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

std::optional<std::size_t> MetricsTable::find(std::string_view name) const {
  for (std::size_t c = 0; c < columns.size(); ++c)
    if (columns[c] == name) return c;
  return std::nullopt;
}

const std::vector<double>& MetricsTable::column(std::string_view name,
                                                std::string_view flag) const {
  if (auto c = find(name)) return values[*c];
  throw ParamError(fmt::format("{}: unknown column '{}' in {}; valid: {}", flag, name, source,
                               fmt::join(columns, ", ")));
}

MetricsTable parse_metrics_csv(std::string_view text, const std::string& source) {
  MetricsTable table;
  table.source = source;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 byte order mark
  std::size_t pos = 0;
  int line_no = 0;
  bool have_header = false;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;
    const std::string where = fmt::format("{}:{}", source, line_no);
    auto cells = split_cells(line, where);
    if (!have_header) {
      std::set<std::string> seen;
      for (std::size_t c = 0; c < cells.size(); ++c) {
        if (cells[c].empty())
          throw DataError(
              fmt::format("{}: empty column name in the header (column {})", where, c + 1));
        if (!seen.insert(cells[c]).second)
          throw DataError(
              fmt::format("{}: duplicate column name '{}' in the header", where, cells[c]));
      }
      table.columns = std::move(cells);
      table.values.resize(table.columns.size());
      have_header = true;
      continue;
    }
    if (cells.size() != table.columns.size())
      throw DataError(fmt::format("{}: expected {} cells as in the header, got {}", where,
                                  table.columns.size(), cells.size()));
    for (std::size_t c = 0; c < cells.size(); ++c) {
      double v = 0;
      if (!parse_number(cells[c], v))
        throw DataError(fmt::format("{}: column '{}': '{}' is not a number", where,
                                    table.columns[c], cells[c]));
      table.values[c].push_back(v);
    }
  }
  if (!have_header) throw DataError(fmt::format("{}: empty file, expected a header row", source));
  return table;
}

MetricsTable read_metrics_csv(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw DataError(fmt::format("cannot read {}: no such file", path.string()));
  return parse_metrics_csv(read_file(path), path.string());
}

}  // namespace dprl::tools
