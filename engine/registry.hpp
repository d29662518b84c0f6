// Registries of envs, algorithms and mechanisms, created by name with parameters.
//
// Entries are added from explicit lists (envs/register_envs.cpp, algos/run/register_algos.cpp);
// static self-registering objects are not used because static libraries drop them. User programs
// call add() on the same registry. An alias names an entry plus a parameter preset (Gymnasium ids:
// "CartPole-v0" is cartpole with max_episode_steps 200); user parameters override the preset.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <typeindex>
#include <typeinfo>
#include <vector>

#include "engine/params.hpp"

namespace dprl {

// Joins names for error messages: "a, b, c".
std::string join_names(const std::vector<std::string>& names);
[[noreturn]] void throw_unknown_name(std::string_view kind, std::string_view name,
                                     const std::vector<std::string>& valid);

template <class T>
class Registry {
 public:
  struct Entry {
    std::string name;
    std::string summary;    // one line
    std::string reference;  // what it matches (source file, paper section)
    std::function<std::unique_ptr<T>(const ParamMap&)> make;
    std::function<std::vector<ParamInfo>()> describe;
    std::type_index type = typeid(void);  // the concrete class make_entry registered
  };
  struct Alias {
    std::string name;
    std::string target;
    ParamMap preset;
    std::string summary;
  };

  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  void add(Entry e) {
    if (find(e.name) || find_alias(e.name))
      throw UnknownName(kind_ + " '" + e.name + "' is registered twice");
    entries_.push_back(std::move(e));
  }
  void add_alias(Alias a) {
    if (!find(a.target)) throw_unknown_name(kind_, a.target, names());
    if (find(a.name) || find_alias(a.name))
      throw UnknownName(kind_ + " '" + a.name + "' is registered twice");
    aliases_.push_back(std::move(a));
  }

  const Entry* find(std::string_view name) const {
    for (auto& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }
  const Alias* find_alias(std::string_view name) const {
    for (auto& a : aliases_)
      if (a.name == name) return &a;
    return nullptr;
  }
  bool contains(std::string_view name) const { return find(name) || find_alias(name); }

  // The entry a name or alias resolves to, and the full parameter map (preset, then params).
  std::pair<const Entry*, ParamMap> resolve(std::string_view name, const ParamMap& params) const {
    if (auto* e = find(name)) return {e, params};
    if (auto* a = find_alias(name)) {
      ParamMap merged = a->preset;
      for (auto& [k, v] : params) param_map_set(merged, k, v);
      return {find(a->target), merged};
    }
    throw_unknown_name(kind_, name, all_names());
  }

  std::unique_ptr<T> make(std::string_view name, const ParamMap& params = {}) const {
    auto [entry, merged] = resolve(name, params);
    return entry->make(merged);
  }

  const std::vector<Entry>& entries() const { return entries_; }
  const std::vector<Alias>& aliases() const { return aliases_; }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (auto& e : entries_) out.push_back(e.name);
    return out;
  }
  std::vector<std::string> all_names() const {
    auto out = names();
    for (auto& a : aliases_) out.push_back(a.name);
    return out;
  }
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
  std::vector<Entry> entries_;
  std::vector<Alias> aliases_;
};

// Registers a concrete type E constructed from E::Params read strictly from the map.
template <class Base, class E>
typename Registry<Base>::Entry make_entry(std::string name, std::string summary,
                                          std::string reference) {
  typename Registry<Base>::Entry e;
  e.name = name;
  e.summary = std::move(summary);
  e.reference = std::move(reference);
  e.make = [name](const ParamMap& m) -> std::unique_ptr<Base> {
    return std::make_unique<E>(read_params<typename E::Params>(m, name));
  };
  e.describe = [] { return describe_params<typename E::Params>(); };
  e.type = typeid(E);
  return e;
}

}  // namespace dprl
