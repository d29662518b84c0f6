// Taxi's picture: the 5 x 5 grid (row 0 at the top, one unit per cell) with the walls of the map
// as thick lines, the four depots R, G, Y, B tinted in their colours and lettered, the
// destination framed in magenta, the waiting passenger as a blue disc on their depot, and the taxi
// as a yellow box (green with the blue disc inside once the passenger is aboard).
#include <string>

#include "envs/render.hpp"
#include "envs/taxi.hpp"

namespace dprl::envs {

Scene render_taxi(const Env& env) {
  constexpr const char* kTaxiDepotNames[4] = {"R", "G", "Y", "B"};
  constexpr const char* kTaxiDepotTints[4] = {"#f4b6b6", "#b6e3b6", "#f4eaa0", "#b6c8f4"};
  const auto [taxi_row, taxi_col, pass_loc, dest_idx] =
      Taxi::decode(static_cast<int>(env.state().at(0)));
  // lower-left corner of cell (row, col)
  auto cell_x = [](int col) { return static_cast<double>(col); };
  auto cell_y = [](int row) { return static_cast<double>(4 - row); };
  Scene sc;
  sc.x0 = sc.y0 = -0.25;
  sc.width = sc.height = 5.5;
  sc.rect(0, 0, 5, 5, "#fafafa");
  for (int i = 0; i < 4; ++i) {
    const auto [r, c] = Taxi::landmark(i);
    sc.rect(cell_x(c), cell_y(r), 1, 1, kTaxiDepotTints[i]);
    sc.text(cell_x(c) + 0.06, cell_y(r) + 0.72, 0.25, kTaxiDepotNames[i]);
  }
  for (int k = 1; k < 5; ++k) {
    sc.line(k, 0, k, 5, "#c7c7c7", 0.02);
    sc.line(0, k, 5, k, "#c7c7c7", 0.02);
  }
  {
    const auto [r, c] = Taxi::landmark(dest_idx);
    sc.rect(cell_x(c) + 0.05, cell_y(r) + 0.05, 0.9, 0.9, "none", "#d62ad6", 0.08);
  }
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 4; ++c)
      if (Taxi::wall_east_of(r, c))
        sc.line(cell_x(c + 1), cell_y(r), cell_x(c + 1), cell_y(r) + 1, "#000000", 0.1);
  sc.rect(0, 0, 5, 5, "none", "#000000", 0.1);
  const bool aboard = pass_loc == 4;
  sc.rect(cell_x(taxi_col) + 0.2, cell_y(taxi_row) + 0.2, 0.6, 0.6, aboard ? "#2ca02c" : "#ffd700",
          "#000000", 0.03);
  if (aboard) {
    sc.circle(cell_x(taxi_col) + 0.5, cell_y(taxi_row) + 0.5, 0.15, "#1f4fd6");
  } else {
    const auto [r, c] = Taxi::landmark(pass_loc);
    sc.circle(cell_x(c) + 0.72, cell_y(r) + 0.72, 0.15, "#1f4fd6");
  }
  return sc;
}

}  // namespace dprl::envs
