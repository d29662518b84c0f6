// HalfCheetah's picture: a side view (x to the right, z up) of the model's capsules placed by
// planar forward kinematics from qpos and the body and geom frames of the model
// (envs/assets/half_cheetah.xml, Gymnasium's half_cheetah.xml facts): every joint turns about the
// y axis, so each body is a point and an angle in the x-z plane. The torso, head, thighs, shins and
// feet are drawn as bars 0.092 wide (the capsules' diameter) with rounded ends, over a ground line
// at z = 0 with ticks every 0.5 so that forward motion shows; the view, 4 wide and 2 high, follows
// the torso's x. Colours and the camera are not Gymnasium's.
#include <fmt/format.h>

#include <cmath>

#include "envs/render.hpp"

namespace dprl::envs {

namespace {

// a body's world frame in the x-z plane: origin and angle about y (MuJoCo's R_y)
struct CheetahFrame {
  double x, z, angle;
  // the world point of body-local (u, w)
  std::pair<double, double> at(double u, double w) const {
    const double c = std::cos(angle), s = std::sin(angle);
    return {x + c * u + s * w, z - s * u + c * w};
  }
  // the child body at local pos (u, w) turned by joint angle q
  CheetahFrame child(double u, double w, double q) const {
    const auto [cx, cz] = at(u, w);
    return {cx, cz, angle + q};
  }
};

// one capsule of frame f: centre (u, w), axis the local z turned by a about y, half-length h
void cheetah_capsule(Scene& sc, const CheetahFrame& f, double u, double w, double a, double h,
                     const char* colour) {
  constexpr double kCheetahRadius = 0.046;
  const double du = h * std::sin(a), dw = h * std::cos(a);
  const auto [x0, z0] = f.at(u - du, w - dw);
  const auto [x1, z1] = f.at(u + du, w + dw);
  const double len = std::hypot(x1 - x0, z1 - z0);
  const double nx = -(z1 - z0) / len * kCheetahRadius, nz = (x1 - x0) / len * kCheetahRadius;
  sc.polygon({x0 + nx, z0 + nz, x1 + nx, z1 + nz, x1 - nx, z1 - nz, x0 - nx, z0 - nz}, colour);
  sc.circle(x0, z0, kCheetahRadius, colour);
  sc.circle(x1, z1, kCheetahRadius, colour);
}

}  // namespace

Scene render_half_cheetah(const Env& env) {
  const std::vector<double> st = env.state();
  const auto q = [&](std::size_t i) { return st.at(i); };
  const CheetahFrame torso{q(0), 0.7 + q(1), q(2)};
  Scene sc;
  sc.width = 4;
  sc.height = 2;
  sc.x0 = torso.x - 2;
  sc.y0 = -0.4;
  sc.background = "#dbe9f5";
  sc.rect(sc.x0, sc.y0, sc.width, -sc.y0, "#b5a68a");  // the ground, z < 0
  for (double t = std::floor(sc.x0 / 0.5) * 0.5; t <= sc.x0 + sc.width; t += 0.5)
    sc.line(t, 0, t, -0.08, "#5c5345", 0.015);
  const char* const kCheetahBackColour = "#cc6633";
  const char* const kCheetahFrontColour = "#e69966";
  const char* const kCheetahTorsoColour = "#994d26";
  // the torso: fromto (-0.5, 0) - (0.5, 0), i.e. a capsule along x of half-length 0.5
  cheetah_capsule(sc, torso, 0, 0, std::acos(0.0), 0.5, kCheetahTorsoColour);
  cheetah_capsule(sc, torso, 0.6, 0.1, 0.87, 0.15, kCheetahTorsoColour);  // the head
  const CheetahFrame bthigh = torso.child(-0.5, 0, q(3));
  const CheetahFrame bshin = bthigh.child(0.16, -0.25, q(4));
  const CheetahFrame bfoot = bshin.child(-0.28, -0.14, q(5));
  const CheetahFrame fthigh = torso.child(0.5, 0, q(6));
  const CheetahFrame fshin = fthigh.child(-0.14, -0.24, q(7));
  const CheetahFrame ffoot = fshin.child(0.13, -0.18, q(8));
  cheetah_capsule(sc, bthigh, 0.1, -0.13, -3.8, 0.145, kCheetahBackColour);
  cheetah_capsule(sc, bshin, -0.14, -0.07, -2.03, 0.15, kCheetahBackColour);
  cheetah_capsule(sc, bfoot, 0.03, -0.097, -0.27, 0.094, kCheetahBackColour);
  cheetah_capsule(sc, fthigh, -0.07, -0.12, 0.52, 0.133, kCheetahFrontColour);
  cheetah_capsule(sc, fshin, 0.065, -0.09, -0.6, 0.106, kCheetahFrontColour);
  cheetah_capsule(sc, ffoot, 0.045, -0.07, -0.6, 0.07, kCheetahFrontColour);
  sc.text(sc.x0 + 0.05, 1.45, 0.1, fmt::format("x {:.2f}", torso.x));
  return sc;
}

}  // namespace dprl::envs
