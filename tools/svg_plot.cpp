#include "tools/svg_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <string_view>
#include <utility>

#include "engine/error.hpp"
#include "envs/render.hpp"

namespace dprl::tools {

namespace {

// t_{0.975, dof} for dof = 1..30 (index dof - 1).
constexpr double kT975[] = {12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836,
                            2.446911851,  2.364624252, 2.306004135, 2.262157163, 2.228138852,
                            2.200985160,  2.178812830, 2.160368656, 2.144786688, 2.131449546,
                            2.119905299,  2.109815578, 2.100922040, 2.093024054, 2.085963447,
                            2.079613845,  2.073873068, 2.068657610, 2.063898562, 2.059538553,
                            2.055529439,  2.051830516, 2.048407142, 2.045229642, 2.042272456};
// Beyond 30: (dof, t) pairs, then the normal limit.
constexpr std::pair<int, double> kT975Tail[] = {
    {30, 2.042272456}, {40, 2.021075390},  {50, 2.008559112}, {60, 2.000297822},
    {80, 1.990063421}, {100, 1.983971519}, {120, 1.979930405}};
constexpr double kNormal975 = 1.959963985;

// Tableau 10.
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

using envs::xml_escape;

// Characters (UTF-8 code points), for text width estimates.
int text_length(std::string_view s) {
  int n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// At most max_chars code points, ending in "..." when cut.
std::string fit_text(const std::string& s, int max_chars) {
  if (text_length(s) <= max_chars) return s;
  const int keep = std::max(1, max_chars - 3);
  int n = 0;
  std::size_t i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && n++ == keep) break;
  }
  return s.substr(0, i) + "...";
}

std::string num(double v) { return fmt::format("{:.2f}", v); }

double nice_number(double x, bool round) {
  const double e = std::floor(std::log10(x));
  const double f = x / std::pow(10.0, e);
  double nf;
  if (round)
    nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
  else
    nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return nf * std::pow(10.0, e);
}

// An axis in plot coordinates (the values, or their log10 on a log axis): its range (the outer
// ticks), tick labels (k/M/G for large values; 1, 10, 1e3 on a log axis) and unlabelled minor
// ticks.
struct Axis {
  double lo = 0, hi = 1;
  std::vector<double> ticks;
  std::vector<std::string> labels;
  std::vector<double> minor;
};

Axis make_axis(double lo, double hi) {
  if (!(hi > lo)) {
    const double pad = lo != 0 ? std::abs(lo) * 0.1 : 1.0;
    lo -= pad;
    hi += pad;
  }
  Axis a;
  a.ticks = nice_ticks(lo, hi);
  a.lo = a.ticks.front();
  a.hi = a.ticks.back();
  const double step = a.ticks.size() > 1 ? a.ticks[1] - a.ticks[0] : 1.0;
  const double big = std::max(std::abs(a.lo), std::abs(a.hi));
  double unit = 1;
  const char* suffix = "";
  if (big >= 1e9) {
    unit = 1e9, suffix = "G";
  } else if (big >= 1e6) {
    unit = 1e6, suffix = "M";
  } else if (big >= 1e4) {
    unit = 1e3, suffix = "k";
  }
  const double scaled_step = step / unit;
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(scaled_step) + 1e-9)));
  for (double t : a.ticks) {
    if (t == 0)
      a.labels.push_back("0");
    else if (decimals > 6)
      a.labels.push_back(fmt::format("{:.3g}", t));
    else
      a.labels.push_back(fmt::format("{:.{}f}{}", t / unit, decimals, suffix));
  }
  return a;
}

// "1", "10", "100", "1e3", ...; "0.1", "0.01", "1e-3", ...
std::string decade_label(int e) {
  if (e >= 0 && e <= 2) return fmt::format("{}", e == 0 ? 1 : e == 1 ? 10 : 100);
  if (e >= -2 && e < 0) return e == -1 ? "0.1" : "0.01";
  return fmt::format("1e{}", e);
}

// A log axis from the range of log10 values [lo, hi]: decade ticks, and minor ticks at 2..9 times
// each power of ten when at most six decades show (else at the decades left unlabelled).
Axis make_log_axis(double lo, double hi) {
  constexpr int kMinorDecades = 6;
  const std::vector<double> decades = decade_ticks(std::pow(10.0, lo), std::pow(10.0, hi));
  Axis a;
  for (double t : decades) {
    const int e = static_cast<int>(std::lround(std::log10(t)));
    a.ticks.push_back(e);
    a.labels.push_back(decade_label(e));
  }
  a.lo = a.ticks.front();
  a.hi = a.ticks.back();
  const int step = a.ticks.size() > 1 ? static_cast<int>(a.ticks[1] - a.ticks[0]) : 1;
  for (int e = static_cast<int>(a.lo); e < static_cast<int>(a.hi); ++e) {
    if (step == 1 && a.hi - a.lo <= kMinorDecades) {
      for (int k = 2; k <= 9; ++k) a.minor.push_back(e + std::log10(static_cast<double>(k)));
    } else if ((e - static_cast<int>(a.lo)) % step != 0) {
      a.minor.push_back(e);
    }
  }
  return a;
}

// Index ranges [begin, end) where both values are finite.
std::vector<std::pair<std::size_t, std::size_t>> finite_runs(const std::vector<double>& a,
                                                             const std::vector<double>& b) {
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  std::size_t i = 0;
  while (i < a.size()) {
    while (i < a.size() && !(std::isfinite(a[i]) && std::isfinite(b[i]))) ++i;
    const std::size_t begin = i;
    while (i < a.size() && std::isfinite(a[i]) && std::isfinite(b[i])) ++i;
    if (i > begin) runs.emplace_back(begin, i);
  }
  return runs;
}

}  // namespace

double student_t_975(int dof) {
  DPRL_CHECK(dof >= 1);
  if (dof <= 30) return kT975[dof - 1];
  // linear in 1/dof between table entries, and towards the normal quantile past the last
  for (std::size_t k = 1; k < std::size(kT975Tail); ++k) {
    const auto [d0, t0] = kT975Tail[k - 1];
    const auto [d1, t1] = kT975Tail[k];
    if (dof <= d1) {
      const double w = (1.0 / d0 - 1.0 / dof) / (1.0 / d0 - 1.0 / d1);
      return t0 + w * (t1 - t0);
    }
  }
  const auto [dl, tl] = kT975Tail[std::size(kT975Tail) - 1];
  return kNormal975 + (tl - kNormal975) * (static_cast<double>(dl) / dof);
}

namespace {

// x -> one value per contributing run, in run order (so sums are deterministic); a run with
// several rows at one x contributes their mean.
std::map<double, std::vector<double>> align_runs(const std::vector<Curve>& runs) {
  std::map<double, std::vector<double>> at;
  for (const Curve& run : runs) {
    DPRL_CHECK(run.x.size() == run.y.size());
    std::map<double, std::pair<double, int>> own;  // rows of this run at one x
    for (std::size_t i = 0; i < run.x.size(); ++i) {
      if (!std::isfinite(run.x[i]) || !std::isfinite(run.y[i])) continue;
      auto& [sum, count] = own[run.x[i]];
      sum += run.y[i];
      ++count;
    }
    for (const auto& [x, s] : own) at[x].push_back(s.first / s.second);
  }
  return at;
}

}  // namespace

Band seed_band(const std::vector<Curve>& runs) {
  Band band;
  const double nan = std::nan("");
  for (const auto& [x, values] : align_runs(runs)) {
    const int n = static_cast<int>(values.size());
    double sum = 0;
    for (double v : values) sum += v;
    const double mean = sum / n;
    double lower = nan, upper = nan;
    if (n >= 2) {
      double ss = 0;
      for (double v : values) ss += (v - mean) * (v - mean);
      const double sd = std::sqrt(ss / (n - 1));
      const double half = student_t_975(n - 1) * sd / std::sqrt(static_cast<double>(n));
      lower = mean - half;
      upper = mean + half;
    }
    band.x.push_back(x);
    band.mean.push_back(mean);
    band.lower.push_back(lower);
    band.upper.push_back(upper);
    band.n.push_back(n);
  }
  return band;
}

double percentile(std::vector<double> values, double pct) {
  DPRL_CHECK(!values.empty() && pct >= 0 && pct <= 100);
  std::sort(values.begin(), values.end());
  const double h = (static_cast<double>(values.size()) - 1) * pct / 100.0;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (h - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

Band percentile_band(const std::vector<Curve>& runs, double lo_pct, double hi_pct) {
  DPRL_CHECK(lo_pct >= 0 && lo_pct <= hi_pct && hi_pct <= 100);
  Band band;
  const double nan = std::nan("");
  for (const auto& [x, values] : align_runs(runs)) {
    const int n = static_cast<int>(values.size());
    band.x.push_back(x);
    band.mean.push_back(percentile(values, 50));
    band.lower.push_back(n >= 2 ? percentile(values, lo_pct) : nan);
    band.upper.push_back(n >= 2 ? percentile(values, hi_pct) : nan);
    band.n.push_back(n);
  }
  return band;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  DPRL_CHECK(std::isfinite(lo) && std::isfinite(hi) && hi > lo && target >= 2);
  const double range = nice_number(hi - lo, false);
  const double step = nice_number(range / (target - 1), true);
  // integer multiples of step, so labels carry no accumulated rounding
  const double first = std::floor(lo / step + 1e-9);
  const double last = std::ceil(hi / step - 1e-9);
  std::vector<double> ticks;
  for (double k = first; k <= last + 0.5; k += 1) {
    const double t = k * step;
    ticks.push_back(t == 0 ? 0.0 : t);  // no negative zero
  }
  return ticks;
}

std::vector<double> decade_ticks(double lo, double hi, int max_ticks) {
  DPRL_CHECK(std::isfinite(lo) && std::isfinite(hi) && lo > 0 && hi >= lo && max_ticks >= 2);
  // the tolerance keeps an exact power of ten (whose log10 may be off by an ulp) on its decade
  int e_lo = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int e_hi = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (e_hi == e_lo) ++e_hi;
  const int step = (e_hi - e_lo + max_ticks - 2) / (max_ticks - 1);
  auto floor_div = [](int a, int b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); };
  e_lo = floor_div(e_lo, step) * step;
  e_hi = -floor_div(-e_hi, step) * step;
  std::vector<double> ticks;
  for (int e = e_lo; e <= e_hi; e += step) ticks.push_back(std::pow(10.0, e));
  return ticks;
}

namespace {

// A band in plot coordinates: log10 on log axes; points not drawable there are NaN throughout,
// and a lower end that is not positive on a log y axis is -infinity (drawn below the plot).
struct View {
  std::vector<double> x, mean, lower, upper;
};

View to_view(const Band& b, bool log_x, bool log_y) {
  DPRL_CHECK(b.mean.size() == b.x.size() && b.lower.size() == b.x.size() &&
             b.upper.size() == b.x.size());
  const double nan = std::nan("");
  auto lx = [&](double v) { return !log_x ? v : v > 0 ? std::log10(v) : nan; };
  auto ly = [&](double v) { return !log_y ? v : v > 0 ? std::log10(v) : nan; };
  View v;
  for (std::size_t i = 0; i < b.x.size(); ++i) {
    const double x = lx(b.x[i]), mean = ly(b.mean[i]);
    const bool ok = std::isfinite(x) && std::isfinite(mean);
    v.x.push_back(ok ? x : nan);
    v.mean.push_back(ok ? mean : nan);
    v.upper.push_back(ok ? ly(b.upper[i]) : nan);
    const bool below = log_y && b.lower[i] <= 0 && std::isfinite(v.upper.back());
    v.lower.push_back(!ok ? nan : below ? -INFINITY : ly(b.lower[i]));
  }
  return v;
}

}  // namespace

bool has_drawable_point(const PlotSeries& series, bool log_x, bool log_y) {
  const View v = to_view(series.band, log_x, log_y);
  return std::any_of(v.x.begin(), v.x.end(), [](double x) { return std::isfinite(x); });
}

namespace {

constexpr double kCharWidth = 6.6;  // average glyph width at 12px

// The plot's geometry: axes, the plot area in pixels (left, top, width pw, height ph) and the
// legend's width; sx and sy map plot coordinates to pixels.
struct Layout {
  Axis xa, ya;
  double W = 0, H = 0;
  double left = 0, top = 0, pw = 0, ph = 0, legend_w = 0;
  double sx(double x) const { return left + (x - xa.lo) / (xa.hi - xa.lo) * pw; }
  double sy(double y) const { return top + ph - (y - ya.lo) / (ya.hi - ya.lo) * ph; }
};

// The axes over the data ranges (means and bands, in plot coordinates) and the margins: y tick
// labels and y label on the left, legend on the right. DataError when nothing can be drawn.
Layout make_layout(const PlotSpec& spec, const std::vector<View>& views) {
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (const View& v : views) {
    for (std::size_t i = 0; i < v.x.size(); ++i) {
      if (!std::isfinite(v.x[i])) continue;
      x_lo = std::min(x_lo, v.x[i]), x_hi = std::max(x_hi, v.x[i]);
      for (double y : {v.mean[i], v.lower[i], v.upper[i]})
        if (std::isfinite(y)) y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
    }
  }
  if (!(x_lo <= x_hi))
    throw DataError(spec.log_x || spec.log_y
                        ? "nothing to plot: no series has a finite point with positive "
                          "coordinates on the log axes"
                        : "nothing to plot: no series has a finite point");
  Layout l;
  l.xa = spec.log_x ? make_log_axis(x_lo, x_hi) : make_axis(x_lo, x_hi);
  l.ya = spec.log_y ? make_log_axis(y_lo, y_hi) : make_axis(y_lo, y_hi);
  int longest_label = 0, longest_tick = 0;
  for (const auto& s : spec.series) longest_label = std::max(longest_label, text_length(s.label));
  for (const auto& t : l.ya.labels) longest_tick = std::max(longest_tick, text_length(t));
  l.legend_w = std::min(40 + kCharWidth * longest_label + 12, 0.4 * spec.width);
  l.W = spec.width;
  l.H = spec.height;
  l.left = 34 + 6.1 * longest_tick + 8;
  const double right = l.legend_w + 28;
  l.top = spec.title.empty() ? 18 : 44;
  const double bottom = 54;
  l.pw = l.W - l.left - right;
  l.ph = l.H - l.top - bottom;
  return l;
}

// the XML prolog, the svg element, title, white background and the plot area's clip path
void draw_document_start(std::string& svg, const PlotSpec& spec, const Layout& l) {
  auto out = std::back_inserter(svg);
  fmt::format_to(out,
                 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" "
                 "height=\"{1}\" viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans, Helvetica, "
                 "Arial, sans-serif\" font-size=\"12\">\n",
                 spec.width, spec.height);
  if (!spec.title.empty()) fmt::format_to(out, "<title>{}</title>\n", xml_escape(spec.title));
  fmt::format_to(out, "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"white\"/>\n",
                 spec.width, spec.height);
  fmt::format_to(out,
                 "<defs><clipPath id=\"dprl-plot-area\"><rect x=\"{}\" y=\"{}\" width=\"{}\" "
                 "height=\"{}\"/></clipPath></defs>\n",
                 num(l.left), num(l.top), num(l.pw), num(l.ph));
}

// vertical lines at x ticks from y0 to y1, or horizontal ones at y ticks from x0 to x1
void x_tick_lines(std::string& svg, const Layout& l, const std::vector<double>& ticks, double y0,
                  double y1) {
  for (double t : ticks)
    fmt::format_to(std::back_inserter(svg), "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n",
                   num(l.sx(t)), num(y0), num(y1));
}
void y_tick_lines(std::string& svg, const Layout& l, const std::vector<double>& ticks, double x0,
                  double x1) {
  for (double t : ticks)
    fmt::format_to(std::back_inserter(svg), "<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\"/>\n",
                   num(l.sy(t)), num(x0), num(x1));
}

// grid lines, tick marks (minor ones lighter and shorter) and tick labels
void draw_grid(std::string& svg, const Layout& l) {
  const Axis &xa = l.xa, &ya = l.ya;
  const double bottom = l.top + l.ph, right = l.left + l.pw;
  if (!xa.minor.empty() || !ya.minor.empty()) {
    svg += "<g stroke=\"#f3f3f3\" stroke-width=\"1\">\n";
    x_tick_lines(svg, l, xa.minor, l.top, bottom);
    y_tick_lines(svg, l, ya.minor, l.left, right);
    svg += "</g>\n";
  }
  svg += "<g stroke=\"#e6e6e6\" stroke-width=\"1\">\n";
  x_tick_lines(svg, l, xa.ticks, l.top, bottom);
  y_tick_lines(svg, l, ya.ticks, l.left, right);
  svg += "</g>\n<g stroke=\"#333333\" stroke-width=\"1\">\n";
  x_tick_lines(svg, l, xa.ticks, bottom, bottom + 5);
  y_tick_lines(svg, l, ya.ticks, l.left - 5, l.left);
  x_tick_lines(svg, l, xa.minor, bottom, bottom + 3);
  y_tick_lines(svg, l, ya.minor, l.left - 3, l.left);
  svg += "</g>\n<g fill=\"#333333\" font-size=\"11\">\n";
  auto out = std::back_inserter(svg);
  for (std::size_t k = 0; k < xa.ticks.size(); ++k)
    fmt::format_to(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                   num(l.sx(xa.ticks[k])), num(bottom + 18), xml_escape(xa.labels[k]));
  for (std::size_t k = 0; k < ya.ticks.size(); ++k)
    fmt::format_to(out, "<text x=\"{}\" y=\"{}\" dy=\"0.35em\" text-anchor=\"end\">{}</text>\n",
                   num(l.left - 8), num(l.sy(ya.ticks[k])), xml_escape(ya.labels[k]));
  svg += "</g>\n";
}

// a series' band as one shaded path (a band of one point is drawn as an error bar)
void draw_band(std::string& svg, const Layout& l, const View& b, const char* colour) {
  std::string d;
  std::string bars;
  for (const auto& [begin, end] : finite_runs(b.lower, b.upper)) {
    if (end - begin == 1) {
      fmt::format_to(std::back_inserter(bars),
                     "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" "
                     "stroke-opacity=\"0.4\" stroke-width=\"3\"/>\n",
                     num(l.sx(b.x[begin])), num(l.sy(b.upper[begin])), num(l.sy(b.lower[begin])),
                     colour);
      continue;
    }
    for (std::size_t i = begin; i < end; ++i)
      fmt::format_to(std::back_inserter(d), "{}{},{} ", i == begin ? "M" : "L", num(l.sx(b.x[i])),
                     num(l.sy(b.upper[i])));
    for (std::size_t i = end; i-- > begin;)
      fmt::format_to(std::back_inserter(d), "L{},{} ", num(l.sx(b.x[i])), num(l.sy(b.lower[i])));
    d += "Z ";
  }
  if (!d.empty()) {
    d.pop_back();
    fmt::format_to(std::back_inserter(svg),
                   "<path d=\"{}\" fill=\"{}\" fill-opacity=\"0.2\" stroke=\"none\"/>\n", d,
                   colour);
  }
  svg += bars;
}

// a series' mean line (a run of one point is drawn as a dot)
void draw_mean(std::string& svg, const Layout& l, const View& b, const char* colour) {
  auto out = std::back_inserter(svg);
  std::string d;
  for (const auto& [begin, end] : finite_runs(b.x, b.mean)) {
    if (end - begin == 1) {
      fmt::format_to(out, "<circle cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"{}\"/>\n",
                     num(l.sx(b.x[begin])), num(l.sy(b.mean[begin])), colour);
      continue;
    }
    for (std::size_t i = begin; i < end; ++i)
      fmt::format_to(std::back_inserter(d), "{}{},{} ", i == begin ? "M" : "L", num(l.sx(b.x[i])),
                     num(l.sy(b.mean[i])));
  }
  if (!d.empty()) {
    d.pop_back();
    fmt::format_to(out,
                   "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
                   "stroke-linejoin=\"round\" stroke-linecap=\"round\"/>\n",
                   d, colour);
  }
}

// the frame, the axis labels and the title
void draw_labels(std::string& svg, const PlotSpec& spec, const Layout& l) {
  auto out = std::back_inserter(svg);
  fmt::format_to(out,
                 "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                 "stroke=\"#333333\" stroke-width=\"1\"/>\n",
                 num(l.left), num(l.top), num(l.pw), num(l.ph));
  fmt::format_to(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\">{}</text>\n",
                 num(l.left + l.pw / 2), num(l.H - 14), xml_escape(spec.x_label));
  fmt::format_to(out,
                 "<text transform=\"translate(16,{}) rotate(-90)\" text-anchor=\"middle\" "
                 "font-size=\"13\">{}</text>\n",
                 num(l.top + l.ph / 2), xml_escape(spec.y_label));
  if (!spec.title.empty())
    fmt::format_to(out,
                   "<text x=\"{}\" y=\"28\" text-anchor=\"middle\" font-size=\"15\" "
                   "font-weight=\"bold\">{}</text>\n",
                   num(l.left + l.pw / 2), xml_escape(spec.title));
}

// the legend: a line (with a band swatch when the series has a band) and the label per series
void draw_legend(std::string& svg, const PlotSpec& spec, const Layout& l) {
  auto out = std::back_inserter(svg);
  const double lx = l.left + l.pw + 16, ly = l.top;
  const int label_chars = std::max(4, static_cast<int>((l.legend_w - 52) / kCharWidth + 0.5));
  svg += "<g class=\"legend\">\n";
  fmt::format_to(out,
                 "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"white\" "
                 "stroke=\"#cccccc\"/>\n",
                 num(lx), num(ly), num(l.legend_w), num(10.0 + 20.0 * spec.series.size()));
  for (std::size_t s = 0; s < spec.series.size(); ++s) {
    const char* colour = kPalette[s % std::size(kPalette)];
    const double cy = ly + 15 + 20.0 * s;
    const auto& lower = spec.series[s].band.lower;
    if (std::any_of(lower.begin(), lower.end(), [](double v) { return std::isfinite(v); }))
      fmt::format_to(out,
                     "<rect x=\"{}\" y=\"{}\" width=\"24\" height=\"10\" fill=\"{}\" "
                     "fill-opacity=\"0.2\"/>\n",
                     num(lx + 8), num(cy - 5), colour);
    fmt::format_to(out,
                   "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
                   "stroke-width=\"2\"/>\n",
                   num(lx + 8), num(cy), num(lx + 32), num(cy), colour);
    fmt::format_to(out, "<text x=\"{}\" y=\"{}\" dy=\"0.35em\">{}</text>\n", num(lx + 40), num(cy),
                   xml_escape(fit_text(spec.series[s].label, label_chars)));
  }
  svg += "</g>\n";
}

}  // namespace

std::string render_svg(const PlotSpec& spec) {
  if (spec.width < 200 || spec.height < 150 || spec.width > 100000 || spec.height > 100000)
    throw ParamError(fmt::format(
        "--width/--height: plot size must be between 200x150 and 100000x100000 pixels, got {}x{}",
        spec.width, spec.height));
  std::vector<View> views;
  for (const auto& s : spec.series) views.push_back(to_view(s.band, spec.log_x, spec.log_y));
  const Layout l = make_layout(spec, views);
  // band ends below a log axis: one plot height under it, outside the clip rectangle
  for (View& v : views)
    for (double& lo : v.lower)
      if (lo == -INFINITY) lo = l.ya.lo - (l.ya.hi - l.ya.lo);
  std::string svg;
  draw_document_start(svg, spec, l);
  draw_grid(svg, l);
  // data: all bands first, then the mean lines on top
  svg += "<g clip-path=\"url(#dprl-plot-area)\">\n";
  for (std::size_t s = 0; s < spec.series.size(); ++s)
    draw_band(svg, l, views[s], kPalette[s % std::size(kPalette)]);
  for (std::size_t s = 0; s < spec.series.size(); ++s)
    draw_mean(svg, l, views[s], kPalette[s % std::size(kPalette)]);
  svg += "</g>\n";
  draw_labels(svg, spec, l);
  draw_legend(svg, spec, l);
  svg += "</svg>\n";
  return svg;
}

}  // namespace dprl::tools
