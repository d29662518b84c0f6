// The HIV treatment picture: the six state variables as horizontal bars on a log10 scale (per ml,
// the observation's scale), one row each in the state's order T1, T2, T1*, T2*, V, E, with the
// value printed at the right and a black tick at the healthy equilibrium's value. Bars start at
// log10 = 0 (1 per ml) and are clipped to [-1, 8]. The drugs given are not drawn: the action is
// not part of the state.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "envs/hiv.hpp"
#include "envs/render.hpp"

namespace dprl::envs {

Scene render_hiv(const Env& env) {
  constexpr double kHivAxisLo = -1, kHivAxisHi = 8;
  constexpr const char* kHivNames[6] = {"T1", "T2", "T1*", "T2*", "V", "E"};
  constexpr const char* kHivBarColours[6] = {"#2ca02c", "#98df8a", "#d62728",
                                             "#ff9896", "#9467bd", "#1f77b4"};
  const std::vector<double> st = env.state();
  Scene sc;
  sc.x0 = -2.5;
  sc.width = 13;
  sc.y0 = -2.2;
  sc.height = 9;
  // the axis: a grid line and number at every power of ten
  for (int k = static_cast<int>(kHivAxisLo); k <= static_cast<int>(kHivAxisHi); ++k) {
    sc.line(k, -0.3, k, 6, k == 0 ? "#7f7f7f" : "#dddddd", 0.03);
    sc.text(k - 0.12, -0.8, 0.4, fmt::format("{}", k), "#555555");
  }
  sc.text(0, -1.6, 0.4, "log10 concentration per ml (tick: healthy equilibrium)", "#555555");
  for (int i = 0; i < 6; ++i) {
    const double y = 5 - i;  // T1 on top
    const double v = i < static_cast<int>(st.size()) ? st[i] : 0;
    const double lg = v > 0 && std::isfinite(v) ? std::log10(v) : kHivAxisLo;
    const double clipped = std::clamp(lg, kHivAxisLo, kHivAxisHi);
    sc.rect(std::min(0.0, clipped), y + 0.15, std::abs(clipped), 0.7, kHivBarColours[i]);
    const double healthy = std::log10(Hiv::kHealthy[i]);
    sc.line(healthy, y + 0.05, healthy, y + 0.95, "#000000", 0.06);
    sc.text(-2.2, y + 0.3, 0.45, kHivNames[i]);
    sc.text(kHivAxisHi + 0.3, y + 0.3, 0.4, fmt::format("{:.3g}", v));
  }
  return sc;
}

}  // namespace dprl::envs
