#include "engine/space.hpp"

#include <fmt/format.h>

#include <cmath>

#include "engine/error.hpp"
#include "engine/params.hpp"
#include "engine/rng.hpp"

namespace dprl {

Space Space::discrete(std::int64_t n) {
  DPRL_CHECK(n > 0);
  Space s;
  s.kind = Kind::kDiscrete;
  s.n = n;
  return s;
}

Space Space::box(std::vector<double> low, std::vector<double> high) {
  DPRL_CHECK(low.size() == high.size() && !low.empty());
  Space s;
  s.kind = Kind::kBox;
  s.low = std::move(low);
  s.high = std::move(high);
  return s;
}

Space Space::box(std::size_t dim, double lo, double hi) {
  return box(std::vector<double>(dim, lo), std::vector<double>(dim, hi));
}

bool Space::contains(std::span<const float> x) const {
  if (is_discrete()) {
    if (x.size() != 1) return false;
    const double v = x[0];
    return v == std::floor(v) && v >= 0 && v < static_cast<double>(n);
  }
  if (x.size() != low.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) return false;
    if (x[i] < static_cast<float>(low[i]) || x[i] > static_cast<float>(high[i])) return false;
  }
  return true;
}

bool Space::contains(std::span<const double> x) const {
  if (is_discrete()) return false;
  if (x.size() != low.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) || x[i] < low[i] || x[i] > high[i]) return false;
  }
  return true;
}

std::int64_t Space::sample_index(Rng& rng) const {
  DPRL_CHECK(is_discrete());
  return static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n)));
}

void Space::sample(Rng& rng, std::span<double> out) const {
  DPRL_CHECK(out.size() == dim());
  if (is_discrete()) {
    out[0] = static_cast<double>(sample_index(rng));
    return;
  }
  for (std::size_t i = 0; i < low.size(); ++i) {
    const bool has_low = std::isfinite(low[i]), has_high = std::isfinite(high[i]);
    if (has_low && has_high) {
      out[i] = rng.uniform(low[i], high[i]);
    } else if (has_low) {
      out[i] = low[i] - std::log(rng.uniform_open());
    } else if (has_high) {
      out[i] = high[i] + std::log(rng.uniform_open());
    } else {
      out[i] = rng.normal();
    }
  }
}

std::vector<double> Space::sample(Rng& rng) const {
  std::vector<double> out(dim());
  sample(rng, out);
  return out;
}

std::string Space::describe() const {
  if (is_discrete()) return fmt::format("Discrete({})", n);
  bool uniform = true;
  for (std::size_t i = 1; i < low.size(); ++i)
    uniform = uniform && low[i] == low[0] && high[i] == high[0];
  if (uniform)
    return fmt::format("Box({}, {}, ({},))", format_param(low[0]), format_param(high[0]),
                       low.size());
  std::vector<std::string> lo, hi;
  for (std::size_t i = 0; i < low.size(); ++i) {
    lo.push_back(format_param(low[i]));
    hi.push_back(format_param(high[i]));
  }
  return fmt::format("Box([{}], [{}])", fmt::join(lo, ", "), fmt::join(hi, ", "));
}

}  // namespace dprl
