// The neighbouring relation of a privacy guarantee: which pairs of data sets it compares.
//
// Sources: Dwork and Roth 2014, "The Algorithmic Foundations of Differential Privacy", Def. 2.3
// and the remark after it (add/remove versus replace-one adjacency); dp_accounting's
// NeighboringRelation (ADD_OR_REMOVE_ONE, REPLACE_ONE).
//   kAddRemove   one unit (record, trajectory, expert, user: the caller's unit) is added or
//                removed. The relation of Poisson-subsampled DP-SGD (privacy/user_dp_sgd.hpp),
//                the accountants' subsampled analyses (privacy/accountant.hpp), the expert-level
//                data release and PriMORL.
//   kReplaceOne  one unit's data is replaced by any other; the relation of the DP actor-critic,
//                joint-DP LSVI-UCB (its default) and the kickstarted teacher. An unsampled
//                Gaussian mechanism has the same privacy curve under either relation once its
//                sensitivity is the relation's; Poisson-subsampled events are accounted under
//                add/remove only (docs/privacy.md, "What each guarantee covers").
// Run summaries (engine/run_dir.hpp) and ledgers (privacy/ledger.hpp) record it by name:
// "add-remove" or "replace" (the strings are part of both file formats).
#pragma once

#include <optional>
#include <string_view>

namespace dprl {

enum class NeighbouringRelation { kAddRemove, kReplaceOne };

// "add-remove" or "replace".
std::string_view neighbouring_name(NeighbouringRelation relation);
// The relation a name denotes; nothing for any other text.
std::optional<NeighbouringRelation> parse_neighbouring(std::string_view name);

}  // namespace dprl
