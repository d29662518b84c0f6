// Parameter structs: one visit() listing drives reading, validation, docs and the resolved dump.
//
// A params struct keeps its defaults in field initialisers and lists each field once:
//
//   struct CartPoleParams {
//     double gravity = 9.8;  // Gymnasium cartpole.py
//     int max_episode_steps = 500;
//     template <class V> void visit(V& v) {
//       v("gravity", gravity, Range::positive(), "gravitational acceleration (m/s^2)");
//       v("max_episode_steps", max_episode_steps, Range::closed(1, 1e9), "time limit");
//     }
//     void check() const {}  // optional: cross-field rules, throws ParamError
//   };
//
// Field types: double, int, std::int64_t, bool (no range), std::string (with Choices, or free
// text when Choices is empty). read_params() rejects unknown keys listing the valid ones, parses
// each value strictly and validates every field, so a params object that exists is valid.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/error.hpp"

namespace dprl {

// A value as the user wrote it, and where ("configs/x.yaml:4:12", "--set", "--param").
struct ParamText {
  std::string text;
  std::string where;
};
// Ordered key -> value list (YAML order, then overrides).
using ParamMap = std::vector<std::pair<std::string, ParamText>>;

// Set or replace key in map.
void param_map_set(ParamMap& map, std::string key, ParamText value);

struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;

  static Range closed(double lo, double hi) { return {lo, hi, false, false}; }
  static Range open(double lo, double hi) { return {lo, hi, true, true}; }
  static Range left_open(double lo, double hi) { return {lo, hi, true, false}; }   // (lo, hi]
  static Range right_open(double lo, double hi) { return {lo, hi, false, true}; }  // [lo, hi)
  static Range positive() { return {0, std::numeric_limits<double>::infinity(), true, true}; }
  static Range non_negative() { return {0, std::numeric_limits<double>::infinity(), false, true}; }
  static Range at_least(double lo) {
    return {lo, std::numeric_limits<double>::infinity(), false, true};
  }
  static Range any() { return {}; }

  bool contains(double x) const;
  std::string describe() const;  // "(0, inf)", "[1, 500]"
};

struct Choices {
  std::vector<std::string_view> names;  // empty = free text
};

// Documentation of one parameter, for `dprl envs`, docs tables and error messages.
struct ParamInfo {
  std::string name;
  std::string type;   // "float", "int", "bool", "string"
  std::string value;  // current (default when described from a default-constructed struct)
  std::string range;  // "(0, inf)", "{balance, swingup}", "" for bool/free text
  std::string doc;
};

// Formatting used everywhere values are printed: shortest round-trip decimal.
std::string format_param(double v);
std::string format_param(std::int64_t v);
std::string format_param(bool v);

namespace detail {

// Parse helpers; each throws ParamError naming owner.key and where.
double parse_double(const ParamText& t, std::string_view owner, std::string_view key);
std::int64_t parse_int(const ParamText& t, std::string_view owner, std::string_view key);
bool parse_bool(const ParamText& t, std::string_view owner, std::string_view key);
[[noreturn]] void fail_range(std::string_view owner, std::string_view key, std::string value,
                             const std::string& rule, std::string_view where);
[[noreturn]] void fail_unknown_key(std::string_view owner, const std::string& key,
                                   std::string_view where, const std::vector<std::string>& valid);

struct Describer {
  std::vector<ParamInfo> out;
  void operator()(const char* n, double& f, Range r, const char* doc) {
    out.push_back({n, "float", format_param(f), r.describe(), doc});
  }
  void operator()(const char* n, int& f, Range r, const char* doc) {
    out.push_back({n, "int", format_param(std::int64_t{f}), r.describe(), doc});
  }
  void operator()(const char* n, std::int64_t& f, Range r, const char* doc) {
    out.push_back({n, "int", format_param(f), r.describe(), doc});
  }
  void operator()(const char* n, bool& f, const char* doc) {
    out.push_back({n, "bool", format_param(f), "", doc});
  }
  void operator()(const char* n, std::string& f, Choices c, const char* doc);
};

// Applies text values to the matching fields; marks which keys it consumed.
struct Reader {
  const ParamMap& map;
  std::string_view owner;
  std::vector<bool> used;

  const ParamText* take(const char* n);
  void operator()(const char* n, double& f, Range, const char*) {
    if (auto* t = take(n)) f = parse_double(*t, owner, n);
  }
  void operator()(const char* n, int& f, Range, const char*);
  void operator()(const char* n, std::int64_t& f, Range, const char*) {
    if (auto* t = take(n)) f = parse_int(*t, owner, n);
  }
  void operator()(const char* n, bool& f, const char*) {
    if (auto* t = take(n)) f = parse_bool(*t, owner, n);
  }
  void operator()(const char* n, std::string& f, Choices, const char*) {
    if (auto* t = take(n)) f = t->text;
  }
};

// Checks ranges and choices.
struct Validator {
  std::string_view owner;
  const ParamMap* given = nullptr;  // where each key was set (a YAML position or the --set), if known
  // the place of key n's last setting ("" when it kept its default or nothing is known)
  std::string_view where(const char* n) const;
  void operator()(const char* n, double& f, Range r, const char*) const {
    if (!r.contains(f))
      fail_range(owner, n, format_param(f), "must be in " + r.describe(), where(n));
  }
  void operator()(const char* n, int& f, Range r, const char*) const {
    if (!r.contains(f))
      fail_range(owner, n, format_param(std::int64_t{f}), "must be in " + r.describe(), where(n));
  }
  void operator()(const char* n, std::int64_t& f, Range r, const char*) const {
    if (!r.contains(static_cast<double>(f)))
      fail_range(owner, n, format_param(f), "must be in " + r.describe(), where(n));
  }
  void operator()(const char*, bool&, const char*) const {}
  void operator()(const char* n, std::string& f, Choices c, const char*) const;
};

}  // namespace detail

// Every parameter of P with its current value, type, range and doc.
template <class P>
std::vector<ParamInfo> describe_params(P p = P{}) {
  detail::Describer d;
  p.visit(d);
  return d.out;
}

// Validates ranges, choices and P::check() if present; throws ParamError naming owner.key.
template <class P>
void validate_params(P& p, std::string_view owner, const ParamMap* given = nullptr) {
  detail::Validator v{owner, given};
  p.visit(v);
  if constexpr (requires { p.check(); }) p.check();
}

// Builds P from its defaults overlaid with map; unknown keys, bad text and out-of-range values
// throw ParamError (the message names owner, key, where and the rule or the valid keys).
template <class P>
P read_params(const ParamMap& map, std::string_view owner, P p = P{}) {
  detail::Reader r{map, owner, std::vector<bool>(map.size(), false)};
  p.visit(r);
  for (std::size_t i = 0; i < map.size(); ++i) {
    if (!r.used[i]) {
      std::vector<std::string> valid;
      for (auto& info : describe_params(p)) valid.push_back(info.name);
      detail::fail_unknown_key(owner, map[i].first, map[i].second.where, valid);
    }
  }
  validate_params(p, owner, &map);
  return p;
}

// The resolved values as (name, text) pairs, in listing order.
template <class P>
ParamMap dump_params(P p) {
  ParamMap out;
  for (auto& info : describe_params(p)) out.push_back({info.name, {info.value, ""}});
  return out;
}

}  // namespace dprl
