// Pictures of an env's current state: a small 2-D vector scene and the renderers that draw the
// classic envs into one, written out as SVG.
//
// A Scene holds shapes in world coordinates (y up) and the view box they are seen through.
// render_scene(env) draws env's current state (it reads env.state(), env.params() and env.spec()
// only, through a const reference: rendering never changes a trajectory; lunar_lander's state is
// a replay recipe, so its renderer reads the Box2D world that recipe determines, the env's own
// when env is a LunarLander) with the renderer of
// env.spec().id: cartpole, acrobot and pendulum as Gymnasium 1.x draws them
// (its classic-control renderers, render_mode "rgb_array"), taxi as a 5x5 grid with its walls
// and depots, chain_mdp as a strip of cells, lunar_lander with Gymnasium's geometry,
// hiv as six log-scale bars, linear_mdp as a strip of cells,
// dmc_cartpole and half_cheetah as side views of their models. Other envs have no renderer
// (nullopt). docs/render.md describes each picture.
//
// The SVG writer maps the view box onto a canvas width_px wide (the height follows the aspect
// ratio), flips y, and prints coordinates with 2 decimals; colours are "#rrggbb" or "none".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/env.hpp"

namespace dprl::envs {

// One primitive. Its points are in world units.
struct Shape {
  enum class Kind { kLine, kPolyline, kPolygon, kRect, kCircle, kText };
  Kind kind = Kind::kLine;
  // line: x0 y0 x1 y1; polyline, polygon: x y pairs; rect: x y (lower left) w h;
  // circle: cx cy r; text: x y (start of the baseline) size
  std::vector<double> v;
  std::string fill = "none";
  std::string stroke = "none";
  double stroke_width = 0;  // world units
  std::string text;         // kText only (escaped when written)
};

struct Scene {
  // view box in world units: lower left corner and size
  double x0 = 0, y0 = 0, width = 1, height = 1;
  std::string background = "#ffffff";
  std::vector<Shape> shapes;

  void line(double xa, double ya, double xb, double yb, std::string stroke, double stroke_width);
  void polygon(std::vector<double> xy, std::string fill, std::string stroke = "none",
               double stroke_width = 0);
  void polyline(std::vector<double> xy, std::string stroke, double stroke_width);
  void rect(double x, double y, double w, double h, std::string fill, std::string stroke = "none",
            double stroke_width = 0);
  void circle(double cx, double cy, double r, std::string fill, std::string stroke = "none",
              double stroke_width = 0);
  void text(double x, double y, double size, std::string s, std::string fill = "#000000");
};

// The ids that have a renderer (cartpole, acrobot, pendulum, taxi, chain_mdp, lunar_lander,
// hiv, linear_mdp, dmc_cartpole, half_cheetah).
const std::vector<std::string>& rendered_env_ids();
bool has_renderer(std::string_view env_id);
// env's current state as a Scene; nullopt when its id has no renderer.
std::optional<Scene> render_scene(const Env& env);

// The per-env renderers render_scene dispatches to (each in envs/<name>_render.cpp or here).
Scene render_cartpole(const Env& env);
Scene render_acrobot(const Env& env);
Scene render_pendulum(const Env& env);
Scene render_taxi(const Env& env);
Scene render_chain_mdp(const Env& env);
Scene render_lunar_lander(const Env& env);
Scene render_hiv(const Env& env);
Scene render_linear_mdp(const Env& env);
Scene render_dmc_cartpole(const Env& env);
Scene render_half_cheetah(const Env& env);

// Canvas height in pixels of scene s drawn width_px wide.
double svg_height(const Scene& s, double width_px);
// Appends the SVG elements of s (background included, no <svg> wrapper) on a canvas width_px
// wide whose top edge is at pixel row top_px.
void append_svg(const Scene& s, double width_px, double top_px, std::string& out);
// s as a standalone SVG document width_px wide.
std::string scene_svg(const Scene& s, double width_px = 600);
// s with &, <, >, " and ' escaped for XML text and attributes, and the C0 control characters
// but tab dropped (XML 1.0 has none), line feeds too unless keep_line_feeds (HTML text, where a
// <pre> shows them); every SVG and HTML writer (scenes, dprl plot, dprl report) uses it.
std::string xml_escape(std::string_view s, bool keep_line_feeds = false);

}  // namespace dprl::envs
