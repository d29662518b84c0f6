#include "engine/params.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace dprl {

void param_map_set(ParamMap& map, std::string key, ParamText value) {
  for (auto& [k, v] : map) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  map.emplace_back(std::move(key), std::move(value));
}

bool Range::contains(double x) const {
  if (std::isnan(x)) return false;
  if (lo_open ? !(x > lo) : !(x >= lo)) return false;
  if (hi_open ? !(x < hi) : !(x <= hi)) return false;
  return true;
}

std::string Range::describe() const {
  return fmt::format("{}{}, {}{}", lo_open ? "(" : "[", format_param(lo), format_param(hi),
                     hi_open ? ")" : "]");
}

std::string format_param(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  return fmt::format("{}", v);
}
std::string format_param(std::int64_t v) { return fmt::format("{}", v); }
std::string format_param(bool v) { return v ? "true" : "false"; }

namespace detail {
namespace {

std::string at(std::string_view where) {
  return where.empty() ? std::string() : fmt::format(" (at {})", where);
}

// "owner.key: 'text' <rule> (at where)", with its parts
[[noreturn]] void fail_parse(const ParamText& t, std::string_view owner, std::string_view key,
                             const char* rule) {
  throw ParamError(fmt::format("{}.{}: '{}' {}{}", owner, key, t.text, rule, at(t.where)),
                   fmt::format("{}.{}", owner, key), t.text, rule, t.where);
}

}  // namespace

double parse_double(const ParamText& t, std::string_view owner, std::string_view key) {
  const std::string& s = t.text;
  if (s == ".inf" || s == "inf" || s == "+.inf" || s == "+inf") return INFINITY;
  if (s == "-.inf" || s == "-inf") return -INFINITY;
  const char* begin = s.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(begin, &end);
  if (s.empty() || end != begin + s.size() || std::isnan(v) || errno == ERANGE ||
      s.find_first_of("xXpP") != std::string::npos)
    fail_parse(t, owner, key, "is not a number");
  return v;
}

std::int64_t parse_int(const ParamText& t, std::string_view owner, std::string_view key) {
  const std::string& s = t.text;
  const char* begin = s.c_str();
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(begin, &end, 10);
  if (!s.empty() && end == begin + s.size() && errno != ERANGE) return v;
  // accept integral floating text such as 1e6
  const char* b2 = s.c_str();
  char* e2 = nullptr;
  const double d = std::strtod(b2, &e2);
  if (!s.empty() && e2 == b2 + s.size() && std::isfinite(d) && d == std::floor(d) &&
      std::fabs(d) < 9.0e15 && s.find_first_of("xXpP") == std::string::npos)
    return static_cast<std::int64_t>(d);
  fail_parse(t, owner, key, "is not an integer");
}

bool parse_bool(const ParamText& t, std::string_view owner, std::string_view key) {
  const std::string& s = t.text;
  if (s == "true" || s == "True" || s == "TRUE" || s == "yes" || s == "on" || s == "1") return true;
  if (s == "false" || s == "False" || s == "FALSE" || s == "no" || s == "off" || s == "0")
    return false;
  fail_parse(t, owner, key, "is not a boolean (true or false)");
}

void fail_range(std::string_view owner, std::string_view key, std::string value,
                const std::string& rule, std::string_view where) {
  throw ParamError(fmt::format("{}.{} = {}: {}{}", owner, key, value, rule, at(where)),
                   fmt::format("{}.{}", owner, key), value, rule, std::string(where));
}

void fail_unknown_key(std::string_view owner, const std::string& key, std::string_view where,
                      const std::vector<std::string>& valid) {
  const std::string names =
      valid.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(valid, ", "));
  throw ParamError(
      fmt::format("{}: unknown parameter '{}'{}; valid: {}", owner, key, at(where), names),
      fmt::format("{}.{}", owner, key), "", "unknown parameter; valid: " + names,
      std::string(where));
}

void Describer::operator()(const char* n, std::string& f, Choices c, const char* doc) {
  std::string range;
  if (!c.names.empty()) range = fmt::format("{{{}}}", fmt::join(c.names, ", "));
  out.push_back({n, "string", f, range, doc});
}

const ParamText* Reader::take(const char* n) {
  const ParamText* found = nullptr;
  for (std::size_t i = 0; i < map.size(); ++i) {
    if (map[i].first == n) {
      used[i] = true;
      found = &map[i].second;  // the last assignment wins
    }
  }
  return found;
}

void Reader::operator()(const char* n, int& f, Range, const char*) {
  if (auto* t = take(n)) {
    const std::int64_t v = parse_int(*t, owner, n);
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
      fail_range(owner, n, t->text, "does not fit in a 32-bit integer", t->where);
    f = static_cast<int>(v);
  }
}

std::string_view Validator::where(const char* n) const {
  if (!given) return {};
  for (auto it = given->rbegin(); it != given->rend(); ++it)
    if (it->first == n) return it->second.where;
  return {};
}

void Validator::operator()(const char* n, std::string& f, Choices c, const char*) const {
  if (c.names.empty()) return;
  for (auto name : c.names)
    if (name == f) return;
  fail_range(owner, n, "'" + f + "'", fmt::format("must be one of {}", fmt::join(c.names, ", ")),
             where(n));
}

}  // namespace detail
}  // namespace dprl
