// Audits on the protected data and the run's guarantee record.
//
// A training audit (every AuditReport mode but "mechanism") trains the run's configuration
// again, with canaries, on the run's own private data, possibly at a fraction of the noise
// (mis_specify), and nothing charges that training to the run's budget. Its outputs (audit.json,
// summary.json "audit") are therefore not covered, and the run's record cannot stay formal:
// mark_audited sets formal = false, states the reason in details.audit, names the audit's outputs
// in details.not_covered_by_audit, and drops them from covers (the summary.json entry becomes
// "summary.json (except its "audit" object)"). A mechanism audit (ppo_kickstart) draws only
// synthetic neighbour pairs and changes nothing.
#pragma once

#include <string>

#include "algos/audit/audit_report.hpp"
#include "engine/run_dir.hpp"

namespace dprl::algos {

bool audit_retrains_on_run_data(const AuditReport& r);
void mark_audited(PrivacyReport& record);
// The same on a summary.json "privacy" object's JSON text (returns the new text).
std::string mark_audited_json(const std::string& privacy_json);

}  // namespace dprl::algos
