#include "algos/audit/release_canaries.hpp"

#include <fmt/format.h>

#include <cmath>

#include "engine/error.hpp"

namespace dprl::algos {

ReleaseCanaries::ReleaseCanaries(CanarySet& canaries, bool replace, double noise_factor,
                                 double sensitivity_factor, Placement place)
    : c_(canaries),
      replace_(replace),
      noise_factor_(noise_factor),
      sens_factor_(sensitivity_factor),
      place_(std::move(place)) {}

double ReleaseCanaries::shift(const Release& r, std::int64_t j) const {
  const double delta = r.sensitivity * sens_factor_;
  if (replace_) return c_.in[j] ? 0.5 * delta : -0.5 * delta;
  return c_.in[j] ? delta : 0.0;
}

double ReleaseCanaries::before(const Release& r, std::span<double> x) {
  if (!(r.sd > 0.0) || !(r.sensitivity > 0.0) || !std::isfinite(r.sd)) return r.sd * noise_factor_;
  for (std::int64_t j = 0; j < c_.size(); ++j) {
    const std::int64_t k = place_(r, j);
    if (k >= 0) x[static_cast<std::size_t>(k)] += shift(r, j);
  }
  return r.sd * noise_factor_;
}

void ReleaseCanaries::after(const Release& r, std::span<double> x) {
  if (!(r.sd > 0.0) || !(r.sensitivity > 0.0) || !std::isfinite(r.sd)) return;
  const double delta = r.sensitivity * sens_factor_;
  const double c = replace_ ? 0.0 : 0.5 * delta * delta;
  const double inv = 1.0 / (r.sd * r.sd);
  bool carried = false;
  for (std::int64_t j = 0; j < c_.size(); ++j) {
    const std::int64_t k = place_(r, j);
    if (k < 0) continue;
    double& v = x[static_cast<std::size_t>(k)];
    if (std::isfinite(v)) c_.score[j] += (v * delta - c) * inv;
    v -= shift(r, j);
    carried = true;
  }
  if (carried) ++count_[r.channel & 3];
}

AuditReport run_release_audit(Algorithm& audited,
                              const std::function<std::unique_ptr<Env>()>& make_env,
                              const TrainParams& train, const AuditParams& a,
                              const CanarySet& canaries, const std::string& learner,
                              PrivacyReport& record) {
  TrainParams tp = train;
  tp.eval_every = 0;
  tp.eval_episodes = 1;
  tp.checkpoint = false;
  Progress quiet(Progress::Mode::kOff);
  TrainContext ctx(make_env, audit_stream(static_cast<std::uint64_t>(a.seed), 5), tp, nullptr,
                   &quiet);
  audited.train(ctx);
  const auto rec = audited.privacy();
  if (!rec)
    throw DataError(fmt::format("audit: the audited {} run reports no privacy record", learner));
  record = *rec;
  AuditReport r;
  r.mode = "white-box";
  r.mis_specify = a.mis_specify;
  r.epsilon_claimed = rec->epsilon;
  r.delta = rec->delta;
  r.confidence = a.confidence;
  tally_canaries(canaries, a.guesses, r);
  return r;
}

}  // namespace dprl::algos
