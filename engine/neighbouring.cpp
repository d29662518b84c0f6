#include "engine/neighbouring.hpp"

namespace dprl {

std::string_view neighbouring_name(NeighbouringRelation relation) {
  switch (relation) {
    case NeighbouringRelation::kAddRemove:
      return "add-remove";
    case NeighbouringRelation::kReplaceOne:
      return "replace";
  }
  return "?";
}

std::optional<NeighbouringRelation> parse_neighbouring(std::string_view name) {
  if (name == "add-remove") return NeighbouringRelation::kAddRemove;
  if (name == "replace") return NeighbouringRelation::kReplaceOne;
  return std::nullopt;
}

}  // namespace dprl
