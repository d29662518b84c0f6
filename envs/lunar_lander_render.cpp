// LunarLander's picture, with Gymnasium's geometry (its LunarLander renderer): the 600 x 400
// pixel viewport at SCALE 30 (20 x 13.33 world units), a black sky above the white terrain
// outline of 11 chunk points, the two helipad flags (white poles 50/SCALE high at the helipad's
// ends, yellow pennants), the lander hull (LANDER_POLY / SCALE turned by the hull angle) and its
// two legs (boxes 2 LEG_W x 2 LEG_H / SCALE at the legs' Box2D poses) in purple with a dark
// outline. Gymnasium's engine particles are replaced by one orange flame per firing engine, read
// from the last action in the state; with enable_wind an arrow at the top shows the last step's
// wind force.
//
// The state is LunarLander's replay recipe, so the poses come from the Box2D world it determines:
// the env's own world (read only) when env is a LunarLander, else a copy rebuilt by set_state.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "engine/params.hpp"
#include "envs/lunar_lander.hpp"
#include "envs/render.hpp"

namespace dprl::envs {

namespace {

constexpr double kLanderRenderScale = 30.0;  // Gymnasium's SCALE: pixels per world unit
constexpr double kLanderHullPoly[6][2] = {{-14, +17}, {-17, 0}, {-17, -10},
                                          {+17, -10}, {+17, 0}, {+14, +17}};
constexpr double kLanderLegHalfW = 2, kLanderLegHalfH = 8;  // Gymnasium's LEG_W, LEG_H
constexpr double kLanderSideEngineHeight = 14;              // Gymnasium's SIDE_ENGINE_HEIGHT
const char* const kLanderHullColour = "#8066e6";            // (128, 102, 230)
const char* const kLanderOutlineColour = "#4d4d80";         // (77, 77, 128)
const char* const kLanderFlameColour = "#ff8c1a";
const char* const kLanderFlagColour = "#cccc00";  // (204, 204, 0)

// body-frame points (pixels of Gymnasium's geometry) to world x y pairs at pose p
std::vector<double> lander_render_place(const LunarLander::Pose& p,
                                        std::initializer_list<std::pair<double, double>> pts) {
  const double c = std::cos(p.angle), s = std::sin(p.angle);
  std::vector<double> xy;
  xy.reserve(2 * pts.size());
  for (const auto& [u, v] : pts) {
    const double lu = u / kLanderRenderScale, lv = v / kLanderRenderScale;
    xy.push_back(p.x + lu * c - lv * s);
    xy.push_back(p.y + lu * s + lv * c);
  }
  return xy;
}

}  // namespace

Scene render_lunar_lander(const Env& env) {
  const std::vector<double> st = env.state();
  LunarLander::View v;
  if (const auto* lander = dynamic_cast<const LunarLander*>(&env)) {
    v = lander->view();
  } else {
    const auto p = read_params<LunarLanderParams>(env.params(), "lunar_lander");
    LunarLander copy(p);
    copy.set_state(st);
    v = copy.view();
  }
  const auto params = read_params<LunarLanderParams>(env.params(), "lunar_lander");
  Scene sc;
  sc.x0 = 0;
  sc.y0 = 0;
  sc.width = v.width;
  sc.height = v.height;
  sc.background = "#ffffff";
  // the sky: everything above the terrain outline
  if (!v.terrain.empty()) {
    std::vector<double> sky = v.terrain;
    sky.insert(sky.end(), {v.width, v.height, 0.0, v.height});
    sc.polygon(std::move(sky), "#000000");
  } else {
    sc.rect(0, 0, v.width, v.height, "#000000");
  }
  // the helipad flags
  for (const double x : {v.helipad_x1, v.helipad_x2}) {
    const double top = v.helipad_y + 50 / kLanderRenderScale;
    sc.line(x, v.helipad_y, x, top, "#ffffff", 1 / kLanderRenderScale);
    sc.polygon({x, top, x, top - 10 / kLanderRenderScale, x + 25 / kLanderRenderScale,
                top - 5 / kLanderRenderScale},
               kLanderFlagColour);
  }
  if (v.terrain.empty()) return sc;
  // flames of the engines the last action fired
  double main_power = 0, side_power = 0, side_dir = 0;
  const std::size_t n = st.size() >= 3 ? static_cast<std::size_t>(st[2]) : 0;
  if (n > 0 && params.continuous) {
    const double a0 = st[st.size() - 2], a1 = st.back();
    if (a0 > 0) main_power = (std::clamp(a0, 0.0, 1.0) + 1) / 2;
    if (std::abs(a1) > 0.5) {
      side_dir = a1 > 0 ? 1 : -1;
      side_power = std::clamp(std::abs(a1), 0.5, 1.0);
    }
  } else if (n > 0) {
    const int a = static_cast<int>(st.back());
    if (a == 2) main_power = 1;
    if (a == 1 || a == 3) {
      side_dir = a - 2;
      side_power = 1;
    }
  }
  if (main_power > 0) {
    const double len = 10 + 20 * main_power;
    sc.polygon(lander_render_place(v.hull, {{-6, -10}, {6, -10}, {0, -10 - len}}),
               kLanderFlameColour);
  }
  if (side_power > 0) {
    // Gymnasium's direction -1 (action 1) puts the particles on the +x side, +1 on -x
    const double out = -side_dir, h = kLanderSideEngineHeight, len = 6 + 12 * side_power;
    sc.polygon(lander_render_place(v.hull, {{out * 15, h - 3}, {out * 15, h + 3}, {out * (15 + len), h}}),
               kLanderFlameColour);
  }
  // the legs, then the hull
  for (const auto& leg : v.legs) {
    sc.polygon(lander_render_place(leg, {{-kLanderLegHalfW, -kLanderLegHalfH},
                                         {kLanderLegHalfW, -kLanderLegHalfH},
                                         {kLanderLegHalfW, kLanderLegHalfH},
                                         {-kLanderLegHalfW, kLanderLegHalfH}}),
               kLanderHullColour, kLanderOutlineColour, 1 / kLanderRenderScale);
  }
  sc.polygon(lander_render_place(v.hull, {{kLanderHullPoly[0][0], kLanderHullPoly[0][1]},
                                          {kLanderHullPoly[1][0], kLanderHullPoly[1][1]},
                                          {kLanderHullPoly[2][0], kLanderHullPoly[2][1]},
                                          {kLanderHullPoly[3][0], kLanderHullPoly[3][1]},
                                          {kLanderHullPoly[4][0], kLanderHullPoly[4][1]},
                                          {kLanderHullPoly[5][0], kLanderHullPoly[5][1]}}),
             kLanderHullColour, kLanderOutlineColour, 1 / kLanderRenderScale);
  // the wind: an arrow at the top, its length the last step's force over wind_power (1 = 3 units)
  if (params.enable_wind) {
    const double cx = v.width / 2, y = v.height - 1.0;
    const double frac = params.wind_power > 0 ? v.wind_force / params.wind_power : 0;
    const double tip = cx + 3 * frac;
    sc.line(cx, y, tip, y, "#ffffff", 0.08);
    const double head = frac >= 0 ? -0.25 : 0.25;
    if (std::abs(frac) > 1e-9) sc.polygon({tip, y, tip + head, y + 0.15, tip + head, y - 0.15}, "#ffffff");
    sc.text(0.3, y - 0.15, 0.45, fmt::format("wind {:+.1f}", v.wind_force), "#ffffff");
  }
  return sc;
}

}  // namespace dprl::envs
