// Pendulum's picture, with Gymnasium's geometry (its Pendulum renderer): a square
// view of half-width 2.2 around the pivot, a red rod 1 long and 0.2 wide with rounded ends turned
// by theta (theta = 0 points straight up, positive turns counter-clockwise) and a black axle of
// radius 0.05. Like Gymnasium's, the rod is drawn 1 long whatever the length parameter l. The
// torque arrow Gymnasium overlays is not drawn (the last action is not part of the state).
#include <cmath>
#include <numbers>

#include "envs/render.hpp"

namespace dprl::envs {

Scene render_pendulum(const Env& env) {
  const double theta = env.state().at(0);
  Scene sc;
  sc.x0 = sc.y0 = -2.2;
  sc.width = sc.height = 4.4;
  const double a = theta + std::numbers::pi / 2;
  const double c = std::cos(a), sn = std::sin(a);
  std::vector<double> rod;
  for (const auto& [u, v] : {std::pair{0.0, -0.1}, {0.0, 0.1}, {1.0, 0.1}, {1.0, -0.1}}) {
    rod.push_back(u * c - v * sn);
    rod.push_back(u * sn + v * c);
  }
  sc.polygon(std::move(rod), "#cc4d4d");
  sc.circle(c, sn, 0.1, "#cc4d4d");
  sc.circle(0, 0, 0.1, "#cc4d4d");
  sc.circle(0, 0, 0.05, "#000000");
  return sc;
}

}  // namespace dprl::envs
