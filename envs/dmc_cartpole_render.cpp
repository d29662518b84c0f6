// DMC cartpole's picture: a side view (x to the right, z up) of the model's geometry in its own
// units (envs/assets/dmc_cartpole.xml, the suite's cartpole.xml facts): the floor below z =
// -0.05, the rail at z = 1 from x = -2 to 2, the cart a 0.4 x 0.2 box centred at (slider, 1), and
// the pole a capsule 1 long and 0.09 thick from the cart's centre, turned by hinge_1 about the
// y axis (hinge_1 = 0 upright; its tip at (slider + sin hinge_1, 1 + cos hinge_1)). The suite's
// camera, lighting and colours are not reproduced.
#include <cmath>

#include "envs/render.hpp"

namespace dprl::envs {

Scene render_dmc_cartpole(const Env& env) {
  constexpr double kDmcPoleRadius = 0.045, kDmcRailZ = 1;
  const std::vector<double> st = env.state();
  const double x = st.at(0), theta = st.at(1);
  Scene sc;
  sc.x0 = -2.3;
  sc.width = 4.6;
  sc.y0 = -0.2;
  sc.height = 2.3 + 0.2;
  sc.rect(-2.3, -0.2, 4.6, 0.15, "#c8b88a");                      // the floor
  sc.rect(-2, kDmcRailZ - 0.02, 4, 0.04, "#7f7f7f");                // the rail
  sc.rect(x - 0.2, kDmcRailZ - 0.1, 0.4, 0.2, "#cc8033", "#663f1a", 0.01);  // the cart
  const double sx = std::sin(theta), cz = std::cos(theta);
  const double tip_x = x + sx, tip_z = kDmcRailZ + cz;
  // the pole: a bar between its end points, rounded by two discs
  const double nx = cz * kDmcPoleRadius, nz = -sx * kDmcPoleRadius;  // normal to the pole
  sc.polygon({x + nx, kDmcRailZ + nz, tip_x + nx, tip_z + nz, tip_x - nx, tip_z - nz, x - nx,
              kDmcRailZ - nz},
             "#e6b34d");
  sc.circle(tip_x, tip_z, kDmcPoleRadius, "#e6b34d");
  sc.circle(x, kDmcRailZ, kDmcPoleRadius, "#e6b34d");
  sc.circle(x, kDmcRailZ, 0.02, "#000000");
  return sc;
}

}  // namespace dprl::envs
