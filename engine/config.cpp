#include "engine/config.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <sstream>

#include "engine/error.hpp"
#include "engine/io.hpp"

namespace dprl {
namespace {

std::string mark_where(const std::string& name, const YAML::Mark& m) {
  if (m.line < 0) return name;
  return fmt::format("{}:{}:{}", name, m.line + 1, m.column + 1);
}

// Limits on what a config may expand to: anchors and aliases let a few lines name 10^9 nodes
// ("billion laughs"), and nesting drives the recursion below. Real experiment and sweep files
// hold well under a thousand nodes a few levels deep (the duplicate-key check is quadratic in a
// map's size, so the node cap also bounds its time).
constexpr std::size_t kMaxNodes = 20000;
constexpr int kMaxDepth = 64;

struct ConvertState {
  const std::string& name;
  std::size_t nodes = 0;
};

Node convert(const YAML::Node& y, ConvertState& st, int depth) {
  const std::string& name = st.name;
  const std::string where = mark_where(name, y.Mark());
  if (++st.nodes > kMaxNodes)
    throw ConfigError(fmt::format(
        "{}: more than {} values (anchors and aliases expand to too many)", where, kMaxNodes));
  if (depth > kMaxDepth)
    throw ConfigError(fmt::format("{}: nested deeper than {} levels", where, kMaxDepth));
  switch (y.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return Node::null(where);
    case YAML::NodeType::Scalar:
      return Node::scalar(y.Scalar(), where);
    case YAML::NodeType::Sequence: {
      Node n = Node::seq(where);
      for (const auto& e : y) n.push(convert(e, st, depth + 1));
      return n;
    }
    case YAML::NodeType::Map: {
      Node n = Node::map(where);
      for (const auto& kv : y) {
        if (!kv.first.IsScalar())
          throw ConfigError(
              fmt::format("{}: map keys must be plain names", mark_where(name, kv.first.Mark())));
        const std::string key = kv.first.Scalar();
        if (n.find(key))
          throw ConfigError(
              fmt::format("{}: duplicate key '{}'", mark_where(name, kv.first.Mark()), key));
        n.set(key, convert(kv.second, st, depth + 1));
      }
      return n;
    }
  }
  return Node();
}

void emit(YAML::Emitter& out, const Node& n) {
  switch (n.kind()) {
    case Node::Kind::kNull:
      out << YAML::Null;
      break;
    case Node::Kind::kScalar:
      out << n.text();
      break;
    case Node::Kind::kSeq:
      out << YAML::Flow << YAML::BeginSeq;
      for (const auto& e : n.elements()) emit(out, e);
      out << YAML::EndSeq;
      break;
    case Node::Kind::kMap:
      out << YAML::BeginMap;
      for (const auto& [k, v] : n.items()) {
        out << YAML::Key << k << YAML::Value;
        emit(out, v);
      }
      out << YAML::EndMap;
      break;
  }
}

// documents in a YAML text: a '---' line after content, or content after a '...' line, starts
// another one
std::size_t count_documents(std::string_view text) {
  std::size_t docs = 0;
  bool content = false;  // the current document has content
  bool ended = false;    // '...' closed the current document
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const bool marker = line.size() >= 3 &&
                        (line.substr(0, 3) == "---" || line.substr(0, 3) == "...") &&
                        (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
    if (marker && line[0] == '-') {
      if (content || ended) ++docs;
      content = true;  // an explicit document, even if empty
      ended = false;
      // content after '--- ' on the same line belongs to the new document
    } else if (marker) {
      if (content) ++docs;
      content = false;
      ended = true;
    } else {
      const auto first = line.find_first_not_of(" \t\r");
      if (first == std::string_view::npos || line[first] == '#' || line[0] == '%') continue;
      if (ended) {
        ended = false;
      }
      content = true;
    }
  }
  return docs + (content ? 1 : 0);
}

}  // namespace

Node Node::scalar(std::string text, std::string where) {
  Node n;
  n.kind_ = Kind::kScalar;
  n.text_ = std::move(text);
  n.where_ = std::move(where);
  return n;
}
Node Node::null(std::string where) {
  Node n;
  n.where_ = std::move(where);
  return n;
}
Node Node::map(std::string where) {
  Node n;
  n.kind_ = Kind::kMap;
  n.where_ = std::move(where);
  return n;
}
Node Node::seq(std::string where) {
  Node n;
  n.kind_ = Kind::kSeq;
  n.where_ = std::move(where);
  return n;
}

const Node* Node::find(std::string_view key) const {
  for (const auto& [k, v] : items_)
    if (k == key) return &v;
  return nullptr;
}
Node* Node::find(std::string_view key) {
  for (auto& [k, v] : items_)
    if (k == key) return &v;
  return nullptr;
}

Node& Node::set(std::string key, Node value) {
  if (kind_ == Kind::kNull) kind_ = Kind::kMap;
  DPRL_CHECK(kind_ == Kind::kMap);
  if (Node* existing = find(key)) {
    *existing = std::move(value);
    return *existing;
  }
  items_.emplace_back(std::move(key), std::move(value));
  return items_.back().second;
}

void Node::check_keys(const std::vector<std::string>& valid, std::string_view what) const {
  for (const auto& [k, v] : items_) {
    bool ok = false;
    for (const auto& name : valid) ok = ok || name == k;
    if (!ok) {
      const std::string& at = v.where_.empty() ? where_ : v.where_;
      throw ConfigError(fmt::format("{}: unknown key '{}' in {}; valid: {}", at, k, what,
                                    fmt::join(valid, ", ")));
    }
  }
}

void Node::check_keys(std::initializer_list<std::string_view> valid, std::string_view what) const {
  std::vector<std::string> v(valid.begin(), valid.end());
  check_keys(v, what);
}

const Node& Node::expect_map(std::string_view what) const {
  static const Node empty = Node::map("");
  if (kind_ == Kind::kNull) return empty;
  if (kind_ != Kind::kMap)
    throw ConfigError(fmt::format("{}: {} must be a map of key: value", where_, what));
  return *this;
}

std::string Node::as_string(std::string_view what) const {
  if (kind_ != Kind::kScalar)
    throw ConfigError(fmt::format("{}: {} must be a single value", where_, what));
  return text_;
}

double Node::as_double(std::string_view what) const {
  return detail::parse_double({as_string(what), where_}, "config", what);
}
std::int64_t Node::as_int(std::string_view what) const {
  return detail::parse_int({as_string(what), where_}, "config", what);
}

ParamMap Node::to_param_map(std::string_view what) const {
  ParamMap out;
  const Node& m = expect_map(what);
  for (const auto& [k, v] : m.items_) {
    if (v.kind_ == Kind::kMap || v.kind_ == Kind::kSeq)
      throw ConfigError(fmt::format("{}: {}.{} must be a single value, not a {}", v.where_, what, k,
                                    v.kind_ == Kind::kMap ? "map" : "list"));
    out.emplace_back(k, ParamText{v.text_, v.where_});
  }
  return out;
}

Node parse_yaml(std::string_view text, const std::string& name) {
  // a second document would be silently ignored by YAML::Load: refuse it. Counted on the text
  // (a document marker is '---' or '...' at the start of a line): yaml-cpp 0.7's LoadAll loops
  // forever on some malformed input (tests/fuzz/corpus/config/loadall_hang.yaml)
  const std::size_t docs = count_documents(text);
  if (docs > 1)
    throw ConfigError(fmt::format("{}: {} YAML documents ('---'); expected one", name, docs));
  YAML::Node y;
  try {
    y = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}: invalid YAML: {}", mark_where(name, e.mark), e.msg));
  }
  ConvertState st{name};
  return convert(y, st, 0);
}

Node load_yaml_file(const std::filesystem::path& path) {
  Node n = parse_yaml(read_file(path), path.string());
  // an empty file (or only comments) is an empty map located at the file, so that what is
  // missing from it is reported against the file's name
  if (n.is_null()) return Node::map(path.string());
  return n;
}

void apply_override(Node& root, std::string_view assignment, std::string_view flag) {
  const auto eq = assignment.find('=');
  const std::string where = fmt::format("{} {}", flag, assignment);
  if (eq == std::string_view::npos || eq == 0)
    throw ConfigError(fmt::format("{}: expected key.path=value", where));
  const std::string path(assignment.substr(0, eq));
  const std::string value(assignment.substr(eq + 1));
  Node parsed = parse_yaml(value, std::string(flag));
  // the value's location is the flag itself
  if (parsed.is_null()) parsed = Node::null(where);
  if (parsed.is_scalar()) parsed = Node::scalar(parsed.text(), where);
  if (!root.is_map() && !root.is_null())
    throw ConfigError(fmt::format("{}: the document it overrides is not a map of keys", where));
  Node* cur = &root;
  std::size_t start = 0;
  for (;;) {
    const auto dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
    if (key.empty()) throw ConfigError(fmt::format("{}: empty key in '{}'", where, path));
    if (dot == std::string::npos) {
      cur->set(key, std::move(parsed));
      return;
    }
    Node* next = cur->find(key);
    if (!next) next = &cur->set(key, Node::map(where));
    if (next->is_null()) *next = Node::map(where);
    if (!next->is_map())
      throw ConfigError(fmt::format("{}: '{}' is a value, not a map", where, key));
    cur = next;
    start = dot + 1;
  }
}

std::string to_yaml(const Node& node) {
  YAML::Emitter out;
  emit(out, node);
  std::string s = out.c_str();
  if (!s.empty() && s.back() != '\n') s += '\n';
  return s;
}

Node param_map_to_node(const ParamMap& params) {
  Node n = Node::map("");
  for (const auto& [k, v] : params) n.set(k, Node::scalar(v.text, v.where));
  return n;
}

}  // namespace dprl
