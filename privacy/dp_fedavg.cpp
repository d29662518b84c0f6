#include "privacy/dp_fedavg.hpp"

#include <fmt/format.h>

#include <cmath>

#include "engine/error.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/release_tap.hpp"
#include "privacy/rounding.hpp"
#include "privacy/secure_release.hpp"

namespace dprl::privacy {

namespace {

// scale making a (finite) norm of `norm` at most `bound`, with a margin for float rounding
float clip_scale(double norm, double bound) {
  if (norm <= bound) return 1.0f;
  return static_cast<float>(bound / norm * (1.0 - 1e-6));
}

double sq_norm(const float* p, std::size_t n) {
  double s = 0;
  for (std::size_t k = 0; k < n; ++k) s += static_cast<double>(p[k]) * p[k];
  return s;
}

}  // namespace

EnsembleClipping parse_ensemble_clipping(const std::string& name, const std::string& what) {
  if (name == "flat") return EnsembleClipping::kFlat;
  if (name == "per_layer") return EnsembleClipping::kPerLayer;
  throw ParamError(fmt::format("{} = '{}' must be one of flat, per_layer", what, name));
}

void check_dp_fedavg(const EnsembleLayout& layout, const DpFedAvgConfig& cfg) {
  if (!(cfg.clip_norm > 0.0) || !std::isfinite(cfg.clip_norm))
    throw ParamError(fmt::format("clip_norm = {} must be > 0 and finite", cfg.clip_norm));
  if (!(cfg.noise_multiplier >= 0.0) || !std::isfinite(cfg.noise_multiplier))
    throw ParamError(
        fmt::format("noise_multiplier = {} must be >= 0 and finite", cfg.noise_multiplier));
  if (!(cfg.sampling_rate > 0.0 && cfg.sampling_rate <= 1.0))
    throw ParamError(fmt::format("sampling_rate = {} must be in (0, 1]", cfg.sampling_rate));
  if (cfg.units < 1) throw ParamError(fmt::format("units = {} must be >= 1", cfg.units));
  if (cfg.sampling_rate * static_cast<double>(cfg.units) < 1.0)
    throw ParamError(
        fmt::format("sampling_rate * units = {} * {} must be >= 1", cfg.sampling_rate, cfg.units));
  if (cfg.units > kMaxUnits)
    throw ParamError(fmt::format(
        "units = {} must be at most {} (the rounding allowance of the sum, 2 (K + 1)^2 u, then "
        "stays below 1% of C)",
        cfg.units, kMaxUnits));
  if (layout.members < 1)
    throw ParamError(fmt::format("members = {} must be >= 1", layout.members));
  if (layout.blocks.empty()) throw ParamError("dp_fedavg: the layout has no parameter blocks");
  for (const auto& b : layout.blocks)
    if (b.size == 0 || b.offset + b.size > layout.stride)
      throw ParamError(fmt::format("dp_fedavg: block [{}, {}) outside the member stride {}",
                                   b.offset, b.offset + b.size, layout.stride));
}

double ensemble_clip_threshold(const EnsembleLayout& layout, const DpFedAvgConfig& cfg) {
  const double groups = cfg.clipping == EnsembleClipping::kFlat
                            ? layout.members
                            : layout.members * static_cast<double>(layout.blocks.size());
  return cfg.clip_norm / std::sqrt(groups);
}

ClipResult ensemble_clip(std::span<float> delta, const EnsembleLayout& layout,
                         const DpFedAvgConfig& cfg) {
  DPRL_CHECK(delta.size() == layout.stride * static_cast<std::size_t>(layout.members));
  const double bound = ensemble_clip_threshold(layout, cfg);
  double total = 0;
  bool clipped = false;
  // a non-finite value anywhere in the update: the whole update becomes the zero vector (clip
  // factor 0, inside every clip set), so one client's data can neither abort the round nor
  // carry a NaN into the sum; without clipping there is no guarantee and it stays an error
  for (int i = 0; i < layout.members; ++i) {
    const float* m = delta.data() + static_cast<std::size_t>(i) * layout.stride;
    for (const auto& b : layout.blocks) total += sq_norm(m + b.offset, b.size);
  }
  if (!std::isfinite(total)) {
    if (!cfg.clip)
      throw DataError(fmt::format("dp_fedavg: non-finite client update norm {}", total));
    std::fill(delta.begin(), delta.end(), 0.0f);
    return {0.0, true, true};
  }
  total = 0;
  for (int i = 0; i < layout.members; ++i) {
    float* m = delta.data() + static_cast<std::size_t>(i) * layout.stride;
    double member_sq = 0;
    for (const auto& b : layout.blocks) {
      const double sq = sq_norm(m + b.offset, b.size);
      member_sq += sq;
      if (cfg.clip && cfg.clipping == EnsembleClipping::kPerLayer) {
        const float s = clip_scale(std::sqrt(sq), bound);
        if (s != 1.0f) {
          clipped = true;
          for (std::size_t k = 0; k < b.size; ++k) m[b.offset + k] *= s;
        }
      }
    }
    total += member_sq;
    if (cfg.clip && cfg.clipping == EnsembleClipping::kFlat) {
      const float s = clip_scale(std::sqrt(member_sq), bound);
      if (s != 1.0f) {
        clipped = true;
        for (const auto& b : layout.blocks)
          for (std::size_t k = 0; k < b.size; ++k) m[b.offset + k] *= s;
      }
    }
  }
  return {std::sqrt(total), clipped, false};
}

DpFedAvgRound::DpFedAvgRound(EnsembleLayout layout, DpFedAvgConfig cfg)
    : layout_(std::move(layout)), cfg_(cfg) {
  check_dp_fedavg(layout_, cfg_);
  const std::size_t n = layout_.stride * static_cast<std::size_t>(layout_.members);
  sum_.assign(n, 0.0);
}

double DpFedAvgRound::accumulation_error() const {
  // N <= K + 1 clients (the larger neighbour) summed in double: within gamma_(N - 1) sum_k
  // |Delta_k| <= gamma_(N - 1) N C of the exact sum, and the division by q K rounds each entry
  // once more (u |sum| <= u N C (1 + gamma)); both neighbours' averages carry such an error. The
  // clipped updates are floats, exact in double, each of norm at most C (the clip's margin).
  const double n = static_cast<double>(cfg_.units) + 1.0;
  return 2.0 * rounding_gamma(n + 1.0, 53) * n * (1.0 + 0x1.0p-40);
}

double DpFedAvgRound::sensitivity() const {
  return cfg_.clip_norm * (1.0 + accumulation_error()) / denominator();
}

double DpFedAvgRound::noise_std() const { return cfg_.noise_multiplier * sensitivity(); }

void DpFedAvgRound::begin() {
  std::fill(sum_.begin(), sum_.end(), 0.0);
  clients_ = 0;
}

void DpFedAvgRound::add(std::span<const float> delta) {
  DPRL_CHECK(delta.size() == sum_.size());
  for (std::size_t k = 0; k < sum_.size(); ++k) sum_[k] += delta[k];
  ++clients_;
}

std::size_t DpFedAvgRound::noised_values() const {
  std::size_t n = 0;
  for (const auto& b : layout_.blocks) n += b.size;
  return n * static_cast<std::size_t>(layout_.members);
}

double DpFedAvgRound::released_noise_std(bool secure) const {
  const double sd = noise_std();
  if (sd <= 0.0) return sd;
  return gaussian_release_plan(sd, sensitivity(), noised_values(), secure).scale;
}

void DpFedAvgRound::release(std::span<float> theta, NoiseSource* noise) {
  DPRL_CHECK(theta.size() == sum_.size());
  const double den = denominator();
  const double sd = noise_std();
  if (sd <= 0.0) {
    for (int i = 0; i < layout_.members; ++i) {
      const std::size_t base = static_cast<std::size_t>(i) * layout_.stride;
      for (const auto& b : layout_.blocks)
        for (std::size_t k = 0; k < b.size; ++k)
          theta[base + b.offset + k] += static_cast<float>(sum_[base + b.offset + k] / den);
    }
    return;
  }
  if (noise == nullptr) throw ParamError("dp_fedavg: noise_multiplier > 0 needs a noise source");
  // the noised average of every block of every member, in order, as one vector
  scratch_.clear();
  for (int i = 0; i < layout_.members; ++i) {
    const std::size_t base = static_cast<std::size_t>(i) * layout_.stride;
    for (const auto& b : layout_.blocks)
      for (std::size_t k = 0; k < b.size; ++k) scratch_.push_back(sum_[base + b.offset + k] / den);
  }
  const ReleaseTap::Release tr{0, 0, ++releases_, sd, sensitivity()};
  const double drawn = tap_ ? tap_->before(tr, scratch_) : sd;
  const SecurePlan plan =
      gaussian_release_plan(drawn, sensitivity(), scratch_.size(), noise->secure());
  add_gaussian_release(scratch_, plan.scale, plan.grid, *noise);
  if (tap_) tap_->after(tr, scratch_);
  std::size_t j = 0;
  for (int i = 0; i < layout_.members; ++i) {
    const std::size_t base = static_cast<std::size_t>(i) * layout_.stride;
    for (const auto& b : layout_.blocks)
      for (std::size_t k = 0; k < b.size; ++k)
        theta[base + b.offset + k] += static_cast<float>(scratch_[j++]);
  }
}

std::vector<std::int64_t> poisson_sample(std::int64_t units, double q, NoiseSource& source) {
  if (!(q > 0.0 && q <= 1.0))
    throw ParamError(fmt::format("sampling_rate = {} must be in (0, 1]", q));
  std::vector<std::int64_t> out;
  if (q >= 1.0) {
    for (std::int64_t k = 0; k < units; ++k) out.push_back(k);
    return out;
  }
  // gap G = floor(log U / log(1 - q)) is Geometric(q) (failures before a success), so the
  // selected indices are exactly those of independent Bernoulli(q) trials
  const double log1mq = std::log1p(-q);
  std::int64_t k = -1;
  while (true) {
    const double g = std::floor(std::log(source.uniform_open()) / log1mq);
    if (g >= static_cast<double>(units - k)) break;
    k += static_cast<std::int64_t>(g) + 1;
    if (k >= units) break;
    out.push_back(k);
  }
  return out;
}

}  // namespace dprl::privacy
