#include "envs/render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "engine/error.hpp"
#include "envs/chain_mdp.hpp"
#include "envs/linear_mdp.hpp"

namespace dprl::envs {

void Scene::line(double xa, double ya, double xb, double yb, std::string stroke,
                 double stroke_width) {
  shapes.push_back(
      {Shape::Kind::kLine, {xa, ya, xb, yb}, "none", std::move(stroke), stroke_width, {}});
}

void Scene::polygon(std::vector<double> xy, std::string fill, std::string stroke,
                    double stroke_width) {
  shapes.push_back(
      {Shape::Kind::kPolygon, std::move(xy), std::move(fill), std::move(stroke), stroke_width, {}});
}

void Scene::polyline(std::vector<double> xy, std::string stroke, double stroke_width) {
  shapes.push_back(
      {Shape::Kind::kPolyline, std::move(xy), "none", std::move(stroke), stroke_width, {}});
}

void Scene::rect(double x, double y, double w, double h, std::string fill, std::string stroke,
                 double stroke_width) {
  shapes.push_back(
      {Shape::Kind::kRect, {x, y, w, h}, std::move(fill), std::move(stroke), stroke_width, {}});
}

void Scene::circle(double cx, double cy, double r, std::string fill, std::string stroke,
                   double stroke_width) {
  shapes.push_back(
      {Shape::Kind::kCircle, {cx, cy, r}, std::move(fill), std::move(stroke), stroke_width, {}});
}

void Scene::text(double x, double y, double size, std::string s, std::string fill) {
  shapes.push_back({Shape::Kind::kText, {x, y, size}, std::move(fill), "none", 0, std::move(s)});
}

namespace {

// n states as a strip of at most kStateStripMaxCells cells around the current state s, the goal
// cell (if goal >= 0) green and the current one blue, with label (plus the window shown) below
Scene draw_state_strip(int s, int n, int goal, std::string label) {
  constexpr int kStateStripMaxCells = 100;
  const int shown = std::min(n, kStateStripMaxCells);
  // the window [first, first + shown) holding s, aligned to a multiple of kStateStripMaxCells
  const int first = std::min(s / kStateStripMaxCells * kStateStripMaxCells, n - shown);
  if (shown < n) label += fmt::format(", cells {}-{} of {}", first, first + shown - 1, n);
  Scene sc;
  sc.x0 = -1;
  sc.width = shown + 2;
  // text about 0.55 of its size wide per character, filling at most the strip's width
  const double size = std::min(3.0, sc.width / (0.6 * static_cast<double>(label.size())));
  sc.height = std::max(sc.width / 6, 2 + 4 * size);
  sc.y0 = 0.5 - sc.height / 2;
  // the strip, the goal cell if shown, the current cell, then the cell borders as one zigzag
  sc.rect(0, 0, shown, 1, "#f0f0f0");
  if (goal >= first && goal - first < shown) sc.rect(goal - first, 0, 1, 1, "#98df8a");
  sc.rect(s - first, 0, 1, 1, "#1f77b4");
  std::vector<double> borders;
  for (int i = 1; i < shown; ++i) {
    const double lo = i % 2 ? 0 : 1, hi = 1 - lo;
    borders.insert(borders.end(), {double(i), lo, double(i), hi});
  }
  if (!borders.empty()) sc.polyline(std::move(borders), "#7f7f7f", 0.05);
  sc.rect(0, 0, shown, 1, "none", "#7f7f7f", 0.05);
  sc.text(0, -1.5 * size, size, std::move(label));
  return sc;
}

}  // namespace

// the chain MDP: its states as a strip, the goal n - 1
Scene render_chain_mdp(const Env& env) {
  const auto p = read_params<ChainMdpParams>(env.params(), "chain_mdp");
  const int s = static_cast<int>(env.state().at(0));
  return draw_state_strip(s, p.n, p.n - 1, fmt::format("state {} (goal {})", s, p.n - 1));
}

// a linear MDP: its |S| states (the observation's Discrete size) as a strip; no goal cell (the
// chain instance's last state is green)
Scene render_linear_mdp(const Env& env) {
  const auto p = read_params<LinearMdpParams>(env.params(), "linear_mdp");
  const int n = static_cast<int>(env.spec().observation.n);
  const int s = static_cast<int>(env.state().at(0));
  return draw_state_strip(s, n, p.kind == "chain" ? n - 1 : -1,
                          fmt::format("state {} of {} ({})", s, n, p.kind));
}

namespace {

// the one list of renderers: id and drawing function
struct RendererEntry {
  const char* id;
  Scene (*draw)(const Env&);
};
constexpr RendererEntry kRenderers[] = {
    {"cartpole", render_cartpole}, {"acrobot", render_acrobot},     {"pendulum", render_pendulum},
    {"taxi", render_taxi},         {"chain_mdp", render_chain_mdp},
    {"lunar_lander", render_lunar_lander}, {"hiv", render_hiv},
    {"linear_mdp", render_linear_mdp},     {"dmc_cartpole", render_dmc_cartpole},
    {"half_cheetah", render_half_cheetah},
};

const RendererEntry* find_renderer(std::string_view env_id) {
  for (const auto& r : kRenderers)
    if (env_id == r.id) return &r;
  return nullptr;
}

}  // namespace

const std::vector<std::string>& rendered_env_ids() {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> v;
    for (const auto& r : kRenderers) v.emplace_back(r.id);
    return v;
  }();
  return ids;
}

bool has_renderer(std::string_view env_id) { return find_renderer(env_id) != nullptr; }

std::optional<Scene> render_scene(const Env& env) {
  const RendererEntry* r = find_renderer(env.spec().id);
  if (r == nullptr) return std::nullopt;
  return r->draw(env);
}

std::string xml_escape(std::string_view s, bool keep_line_feeds) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // control characters are not allowed in XML 1.0 text: dropped (tab kept)
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || (c == '\n' && keep_line_feeds))
          out += c;
    }
  }
  return out;
}

double svg_height(const Scene& s, double width_px) { return width_px * s.height / s.width; }

void append_svg(const Scene& s, double width_px, double top_px, std::string& out) {
  DPRL_CHECK(s.width > 0 && s.height > 0);
  const double k = width_px / s.width;
  const double top = top_px + s.height * k;  // pixel row of world y = y0
  auto px = [&](double x) { return (x - s.x0) * k; };
  auto py = [&](double y) { return top - (y - s.y0) * k; };
  auto it = std::back_inserter(out);
  fmt::format_to(it, "<rect x=\"0\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\"/>",
                 top_px, width_px, s.height * k, s.background);
  out += '\n';
  for (const Shape& sh : s.shapes) {
    const auto& v = sh.v;
    auto paint = [&] {
      fmt::format_to(it, " fill=\"{}\" stroke=\"{}\"", sh.fill, sh.stroke);
      if (sh.stroke != "none") fmt::format_to(it, " stroke-width=\"{:.2f}\"", sh.stroke_width * k);
    };
    switch (sh.kind) {
      case Shape::Kind::kLine:
        fmt::format_to(it, "<line x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\"",
                       px(v[0]), py(v[1]), px(v[2]), py(v[3]));
        paint();
        out += "/>";
        break;
      case Shape::Kind::kPolyline:
      case Shape::Kind::kPolygon:
        out += sh.kind == Shape::Kind::kPolygon ? "<polygon points=\"" : "<polyline points=\"";
        for (std::size_t i = 0; i + 1 < v.size(); i += 2)
          fmt::format_to(it, "{}{:.2f},{:.2f}", i ? " " : "", px(v[i]), py(v[i + 1]));
        out += '"';
        paint();
        out += "/>";
        break;
      case Shape::Kind::kRect:
        fmt::format_to(it, "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\"",
                       px(v[0]), py(v[1] + v[3]), v[2] * k, v[3] * k);
        paint();
        out += "/>";
        break;
      case Shape::Kind::kCircle:
        fmt::format_to(it, "<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"{:.2f}\"", px(v[0]), py(v[1]),
                       v[2] * k);
        paint();
        out += "/>";
        break;
      case Shape::Kind::kText:
        fmt::format_to(it,
                       "<text x=\"{:.2f}\" y=\"{:.2f}\" font-size=\"{:.2f}\" "
                       "font-family=\"sans-serif\" fill=\"{}\">{}</text>",
                       px(v[0]), py(v[1]), v[2] * k, sh.fill, xml_escape(sh.text));
        break;
    }
    out += '\n';
  }
}

std::string scene_svg(const Scene& s, double width_px) {
  const double h = svg_height(s, width_px);
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.2f} {:.2f}\">\n",
      width_px, std::ceil(h), width_px, h);
  append_svg(s, width_px, 0, out);
  out += "</svg>\n";
  return out;
}

}  // namespace dprl::envs
