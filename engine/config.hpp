// Experiment configuration: a YAML document read into a tree that remembers where every value
// came from, strict key checking, and `--set a.b.c=value` overrides.
//
// yaml-cpp stays inside config.cpp. Every scalar keeps its text; typed reading happens against a
// params struct (engine/params.hpp) or through the helpers below, so errors name
// file:line:column (1-based) and the valid keys.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/params.hpp"

namespace dprl {

class Node {
 public:
  enum class Kind { kNull, kScalar, kMap, kSeq };

  Node() = default;
  static Node null(std::string where);
  static Node scalar(std::string text, std::string where);
  static Node map(std::string where);
  static Node seq(std::string where);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_scalar() const { return kind_ == Kind::kScalar; }
  bool is_map() const { return kind_ == Kind::kMap; }
  bool is_seq() const { return kind_ == Kind::kSeq; }
  const std::string& where() const { return where_; }
  const std::string& text() const { return text_; }

  // Map access.
  const Node* find(std::string_view key) const;
  Node* find(std::string_view key);
  Node& set(std::string key, Node value);  // replaces or appends
  const std::vector<std::pair<std::string, Node>>& items() const { return items_; }
  // Sequence access.
  const std::vector<Node>& elements() const { return elements_; }
  void push(Node n) { elements_.push_back(std::move(n)); }

  // Throws ConfigError for any key not in valid: "<where>: unknown key 'k' in <what>; valid: ...".
  void check_keys(std::initializer_list<std::string_view> valid, std::string_view what) const;
  void check_keys(const std::vector<std::string>& valid, std::string_view what) const;
  // Requires this to be a map (or null, read as empty); throws ConfigError naming what.
  const Node& expect_map(std::string_view what) const;

  // Typed scalar reading with location-bearing errors.
  std::string as_string(std::string_view what) const;
  double as_double(std::string_view what) const;
  std::int64_t as_int(std::string_view what) const;

  // The flat params of a map node whose values are scalars (nested maps are an error).
  ParamMap to_param_map(std::string_view what) const;

 private:
  Kind kind_ = Kind::kNull;
  std::string text_;
  std::string where_;
  std::vector<std::pair<std::string, Node>> items_;
  std::vector<Node> elements_;
};

// Parses YAML text; name is used in locations ("configs/a.yaml:3:5"). Throws ConfigError.
Node parse_yaml(std::string_view text, const std::string& name);
// Reads and parses a file; unreadable files throw DataError naming the path.
Node load_yaml_file(const std::filesystem::path& path);
// Applies "a.b.c=value" (value parsed as YAML, so lists work); throws ConfigError naming the flag.
void apply_override(Node& root, std::string_view assignment, std::string_view flag = "--set");
// Serialises back to YAML (block style, keys in order).
std::string to_yaml(const Node& node);
// Builds a map node from params, e.g. a resolved env parameter list.
Node param_map_to_node(const ParamMap& params);

}  // namespace dprl
