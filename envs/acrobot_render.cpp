// Acrobot's picture, with Gymnasium's geometry (its Acrobot renderer): a square view
// of half-width link_length_1 + link_length_2 + 0.2 around the fixed joint, the goal as a black
// line at height 1, each link a cyan bar 0.2 wide from its joint (theta1 = 0 hangs straight down,
// theta2 is relative to link 1), and a yellow disc of radius 0.1 on each joint.
#include <cmath>
#include <numbers>

#include "envs/acrobot.hpp"
#include "envs/render.hpp"

namespace dprl::envs {

Scene render_acrobot(const Env& env) {
  const auto p = read_params<AcrobotParams>(env.params(), "acrobot");
  const auto s = env.state();
  const double t1 = s.at(0), t2 = s.at(1);
  const double bound = p.link_length_1 + p.link_length_2 + 0.2;
  Scene sc;
  sc.x0 = sc.y0 = -bound;
  sc.width = sc.height = 2 * bound;
  sc.line(-bound, 1, bound, 1, "#000000", bound / 250);
  // joints (x, y) with y up, and each link's direction angle from +x
  const double j1x = p.link_length_1 * std::sin(t1), j1y = -p.link_length_1 * std::cos(t1);
  const double joints[2][2] = {{0, 0}, {j1x, j1y}};
  const double angles[2] = {t1 - std::numbers::pi / 2, t1 + t2 - std::numbers::pi / 2};
  const double lengths[2] = {p.link_length_1, p.link_length_2};
  for (int i = 0; i < 2; ++i) {
    const double c = std::cos(angles[i]), sn = std::sin(angles[i]);
    const double ox = joints[i][0], oy = joints[i][1];
    std::vector<double> bar;
    for (const auto& [u, v] :
         {std::pair{0.0, -0.1}, {0.0, 0.1}, {lengths[i], 0.1}, {lengths[i], -0.1}}) {
      bar.push_back(ox + u * c - v * sn);
      bar.push_back(oy + u * sn + v * c);
    }
    sc.polygon(std::move(bar), "#00cccc");
    sc.circle(ox, oy, 0.1, "#cccc00");
  }
  return sc;
}

}  // namespace dprl::envs
