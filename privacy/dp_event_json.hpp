// Internal: DpEvent <-> nlohmann::json, for the ledger. Not part of the installed interface that
// users need (it pulls in nlohmann/json.hpp); include only from privacy/*.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include "privacy/dp_event.hpp"

namespace dprl::privacy {

nlohmann::json event_to_json(const DpEvent& e);
DpEvent event_from_json(const nlohmann::json& j);

}  // namespace dprl::privacy
