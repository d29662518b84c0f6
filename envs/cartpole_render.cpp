// CartPole's picture, with Gymnasium's geometry (its CartPole renderer): a canvas
// 600 x 400 pixels spanning 2 x_threshold metres (4.8 by default), so one pixel is
// x_threshold / 300 m; the track is a line 100 px above the bottom, the cart a black 50 x 30 px box
// centred on it, the pole 10 px wide and 2 length long, hinged 7.5 px above the cart's centre and
// turned by theta (positive leans toward +x), with a 5 px axle.
#include <cmath>

#include "envs/cartpole.hpp"
#include "envs/render.hpp"

namespace dprl::envs {

Scene render_cartpole(const Env& env) {
  const auto p = read_params<CartPoleParams>(env.params(), "cartpole");
  const auto s = env.state();
  const double x = s.at(0), theta = s.at(2);
  const double world_width = 2 * p.x_threshold;
  const double px = world_width / 600;  // metres per Gymnasium pixel
  Scene sc;
  sc.x0 = -world_width / 2;
  sc.y0 = 0;
  sc.width = world_width;
  sc.height = 400 * px;
  const double carty = 100 * px, cart_w = 50 * px, cart_h = 30 * px, pole_w = 10 * px;
  sc.line(sc.x0, carty, sc.x0 + world_width, carty, "#000000", px);
  sc.rect(x - cart_w / 2, carty - cart_h / 2, cart_w, cart_h, "#000000");
  // the pole: a box from -pole_w / 2 to 2 length - pole_w / 2 along its axis, turned by theta
  const double ax = x, ay = carty + cart_h / 4;
  const double c = std::cos(theta), sn = std::sin(theta);
  const double lo = -pole_w / 2, hi = 2 * p.length - pole_w / 2, half = pole_w / 2;
  std::vector<double> pole;
  for (const auto& [u, v] : {std::pair{-half, lo}, {-half, hi}, {half, hi}, {half, lo}}) {
    pole.push_back(ax + u * c + v * sn);
    pole.push_back(ay - u * sn + v * c);
  }
  sc.polygon(std::move(pole), "#ca9865");
  sc.circle(ax, ay, pole_w / 2, "#8184cb");
  return sc;
}

}  // namespace dprl::envs
