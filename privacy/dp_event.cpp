#include "privacy/dp_event.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "engine/error.hpp"
#include "privacy/dp_event_json.hpp"

namespace dprl::privacy {

DpEvent DpEvent::gaussian(double noise_multiplier) {
  if (!(noise_multiplier >= 0.0) || !std::isfinite(noise_multiplier)) {
    throw ParamError(fmt::format("gaussian event: noise_multiplier = {} must be finite and >= 0",
                                 noise_multiplier));
  }
  return DpEvent(Kind::kGaussian, noise_multiplier, 1, {});
}

DpEvent DpEvent::discrete_gaussian(double noise_multiplier) {
  if (!(noise_multiplier >= 0.0) || !std::isfinite(noise_multiplier)) {
    throw ParamError(
        fmt::format("discrete_gaussian event: noise_multiplier = {} must be finite and >= 0",
                    noise_multiplier));
  }
  return DpEvent(Kind::kDiscreteGaussian, noise_multiplier, 1, {});
}

DpEvent DpEvent::laplace(double scale) {
  if (!(scale > 0.0) || !std::isfinite(scale)) {
    throw ParamError(fmt::format("laplace event: scale = {} must be finite and > 0", scale));
  }
  return DpEvent(Kind::kLaplace, scale, 1, {});
}

DpEvent DpEvent::poisson_sampled(double q, DpEvent event) {
  if (!(q > 0.0 && q <= 1.0)) {
    throw ParamError(
        fmt::format("poisson_sampled event: sampling_probability = {} must be in (0, 1]", q));
  }
  std::vector<DpEvent> c;
  c.push_back(std::move(event));
  return DpEvent(Kind::kPoissonSampled, q, 1, std::move(c));
}

DpEvent DpEvent::self_composed(DpEvent event, std::int64_t count) {
  if (count < 1) {
    throw ParamError(fmt::format("self_composed event: count = {} must be >= 1", count));
  }
  std::vector<DpEvent> c;
  c.push_back(std::move(event));
  return DpEvent(Kind::kSelfComposed, 0.0, count, std::move(c));
}

DpEvent DpEvent::composed(std::vector<DpEvent> events) {
  if (events.empty()) throw ParamError("composed event: events must not be empty");
  return DpEvent(Kind::kComposed, 0.0, 1, std::move(events));
}

std::string_view kind_name(DpEvent::Kind kind) {
  switch (kind) {
    case DpEvent::Kind::kGaussian:
      return "gaussian";
    case DpEvent::Kind::kLaplace:
      return "laplace";
    case DpEvent::Kind::kPoissonSampled:
      return "poisson_sampled";
    case DpEvent::Kind::kSelfComposed:
      return "self_composed";
    case DpEvent::Kind::kComposed:
      return "composed";
    case DpEvent::Kind::kDiscreteGaussian:
      return "discrete_gaussian";
  }
  return "?";
}

namespace {

// The accessors' kind check: a wrong kind is the caller's bug, never a silent value.
void require_event_kind(DpEvent::Kind have, const char* accessor, DpEvent::Kind want,
                        DpEvent::Kind or_want) {
  if (have == want || have == or_want) return;
  const std::string valid = want == or_want
                                ? std::string(kind_name(want))
                                : fmt::format("{} or {}", kind_name(want), kind_name(or_want));
  throw std::logic_error(fmt::format("DpEvent::{}() called on a {} event (valid on {})", accessor,
                                     kind_name(have), valid));
}

}  // namespace

double DpEvent::noise_multiplier() const {
  require_event_kind(kind_, "noise_multiplier", Kind::kGaussian, Kind::kDiscreteGaussian);
  return value_;
}

double DpEvent::laplace_scale() const {
  require_event_kind(kind_, "laplace_scale", Kind::kLaplace, Kind::kLaplace);
  return value_;
}

double DpEvent::sampling_probability() const {
  require_event_kind(kind_, "sampling_probability", Kind::kPoissonSampled, Kind::kPoissonSampled);
  return value_;
}

std::int64_t DpEvent::count() const {
  require_event_kind(kind_, "count", Kind::kSelfComposed, Kind::kSelfComposed);
  return count_;
}

const DpEvent& DpEvent::inner() const {
  require_event_kind(kind_, "inner", Kind::kPoissonSampled, Kind::kSelfComposed);
  return children_.front();
}

const std::vector<DpEvent>& DpEvent::events() const {
  require_event_kind(kind_, "events", Kind::kComposed, Kind::kComposed);
  return children_;
}

bool DpEvent::operator==(const DpEvent& o) const {
  return kind_ == o.kind_ && value_ == o.value_ && count_ == o.count_ && children_ == o.children_;
}

std::string DpEvent::describe() const {
  switch (kind_) {
    case Kind::kGaussian:
      return fmt::format("gaussian(z={})", value_);
    case Kind::kDiscreteGaussian:
      return fmt::format("discrete_gaussian(z={})", value_);
    case Kind::kLaplace:
      return fmt::format("laplace(b={})", value_);
    case Kind::kPoissonSampled:
      return fmt::format("poisson(q={}, {})", value_, inner().describe());
    case Kind::kSelfComposed:
      return fmt::format("{} x {}", inner().describe(), count_);
    case Kind::kComposed: {
      std::string s = "compose(";
      for (std::size_t i = 0; i < children_.size(); ++i) {
        if (i) s += ", ";
        s += children_[i].describe();
      }
      return s + ")";
    }
  }
  return "?";
}

nlohmann::json event_to_json(const DpEvent& e) {
  switch (e.kind()) {
    case DpEvent::Kind::kGaussian:
      return {{"kind", "gaussian"}, {"noise_multiplier", e.noise_multiplier()}};
    case DpEvent::Kind::kDiscreteGaussian:
      return {{"kind", "discrete_gaussian"}, {"noise_multiplier", e.noise_multiplier()}};
    case DpEvent::Kind::kLaplace:
      return {{"kind", "laplace"}, {"scale", e.laplace_scale()}};
    case DpEvent::Kind::kPoissonSampled:
      return {{"kind", "poisson_sampled"},
              {"sampling_probability", e.sampling_probability()},
              {"event", event_to_json(e.inner())}};
    case DpEvent::Kind::kSelfComposed:
      return {{"kind", "self_composed"}, {"count", e.count()}, {"event", event_to_json(e.inner())}};
    case DpEvent::Kind::kComposed: {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& c : e.events()) arr.push_back(event_to_json(c));
      return {{"kind", "composed"}, {"events", arr}};
    }
  }
  return {};
}

DpEvent event_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string()) {
    throw DataError("dp event: expected an object with a string \"kind\"");
  }
  const std::string kind = j["kind"].get<std::string>();
  auto num = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_number()) {
      throw DataError(fmt::format("dp event '{}': missing numeric \"{}\"", kind, key));
    }
    return j[key].get<double>();
  };
  auto child = [&]() {
    if (!j.contains("event"))
      throw DataError(fmt::format("dp event '{}': missing \"event\"", kind));
    return event_from_json(j["event"]);
  };
  if (kind == "gaussian") return DpEvent::gaussian(num("noise_multiplier"));
  if (kind == "discrete_gaussian") return DpEvent::discrete_gaussian(num("noise_multiplier"));
  if (kind == "laplace") return DpEvent::laplace(num("scale"));
  if (kind == "poisson_sampled")
    return DpEvent::poisson_sampled(num("sampling_probability"), child());
  if (kind == "self_composed") {
    if (!j.contains("count") || !j["count"].is_number_integer()) {
      throw DataError("dp event 'self_composed': missing integer \"count\"");
    }
    return DpEvent::self_composed(child(), j["count"].get<std::int64_t>());
  }
  if (kind == "composed") {
    if (!j.contains("events") || !j["events"].is_array()) {
      throw DataError("dp event 'composed': missing array \"events\"");
    }
    std::vector<DpEvent> events;
    for (const auto& c : j["events"]) events.push_back(event_from_json(c));
    return DpEvent::composed(std::move(events));
  }
  throw DataError(fmt::format(
      "dp event: unknown kind '{}' (valid: gaussian, discrete_gaussian, laplace, poisson_sampled, "
      "self_composed, composed)",
      kind));
}

std::string DpEvent::to_json() const { return event_to_json(*this).dump(); }

DpEvent DpEvent::from_json(std::string_view text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(fmt::format("dp event: invalid JSON: {}", e.what()));
  }
  return event_from_json(j);
}

void DpsgdSpec::validate() const {
  if (!(noise_multiplier >= 0.0) || !std::isfinite(noise_multiplier)) {
    throw ParamError(
        fmt::format("dpsgd: noise_multiplier = {} must be finite and >= 0", noise_multiplier));
  }
  if (!(sampling_rate > 0.0 && sampling_rate <= 1.0)) {
    throw ParamError(fmt::format("dpsgd: sampling_rate = {} must be in (0, 1]", sampling_rate));
  }
  if (steps < 1) throw ParamError(fmt::format("dpsgd: steps = {} must be >= 1", steps));
}

DpEvent dpsgd_event(const DpsgdSpec& spec) {
  spec.validate();
  const double z = spec.noise_multiplier;
  return DpEvent::self_composed(
      DpEvent::poisson_sampled(
          spec.sampling_rate, spec.discrete ? DpEvent::discrete_gaussian(z) : DpEvent::gaussian(z)),
      spec.steps);
}

bool contains_discrete_gaussian(const DpEvent& e) {
  if (e.kind() == DpEvent::Kind::kDiscreteGaussian) return true;
  for (const auto& c : e.children())
    if (contains_discrete_gaussian(c)) return true;
  return false;
}

}  // namespace dprl::privacy
