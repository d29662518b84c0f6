// Line plots as standalone SVG, with a mean line and a 95% confidence band across seeds, or a
// median line and a percentile band (percentile_band).
//
// Two pure steps, both testable without files:
//   seed_band(runs)   aligns the runs of one configuration on their x values and gives, at each x,
//                     the mean over the runs that have a finite y there and the 95% confidence
//                     interval of that mean, mean +- t_{0.975, n-1} * sd / sqrt(n), with sd the
//                     sample standard deviation (divisor n - 1). Where fewer than two runs have a
//                     value the band is NaN (not drawn).
//   render_svg(spec)  draws the bands (shaded), the mean lines, axes with "nice" ticks (steps of
//                     1, 2 or 5 times a power of ten), axis labels, an optional title and a legend
//                     with one colour per series (Tableau 10, cycled), as an SVG 1.1 document with
//                     no scripts or external resources. Either axis may be base-10 logarithmic:
//                     ticks at powers of ten (labelled 1, 10, 100, 1e3, ...; 0.1, 0.01, 1e-3, ...)
//                     with unlabelled minor ticks at 2..9 times each power when few decades show;
//                     points whose x or mean is not positive on a log axis are skipped (a line
//                     breaks there as at a NaN), and a band whose lower end is not positive runs
//                     off the bottom of the plot.
//
// Student t quantiles t_{0.975, dof} come from a table computed from the regularised incomplete
// beta function (dof 1..30, 40, 50, 60, 80, 100, 120; they agree with published tables to the 9
// digits kept); between table entries above 30 they are interpolated linearly in 1/dof, which is
// accurate to 1e-4, and beyond 120 they approach the normal quantile 1.959963985.
#pragma once

#include <string>
#include <vector>

namespace dprl::tools {

// One run's curve (x and y of equal length; NaN entries are skipped).
struct Curve {
  std::vector<double> x;
  std::vector<double> y;
};

// Statistics across runs at each x (all vectors have the length of x).
struct Band {
  std::vector<double> x;      // ascending union of the finite x where some run has a finite y
  std::vector<double> mean;   // mean over the contributing runs (the median for percentile_band)
  std::vector<double> lower;  // mean - half width of the 95% interval; NaN where n < 2
  std::vector<double> upper;  // mean + half width; NaN where n < 2
  std::vector<int> n;         // number of contributing runs
};

// t_{0.975, dof}, the two-sided 95% Student t quantile; dof >= 1.
double student_t_975(int dof);

// Mean and 95% band across runs. A run with several rows at one x contributes their mean.
Band seed_band(const std::vector<Curve>& runs);

// The pct-th percentile (0..100) of values by linear interpolation between order statistics
// (numpy's default "linear" method: position (n - 1) pct / 100).
double percentile(std::vector<double> values, double pct);
// Median (in Band::mean) and the [lo_pct, hi_pct] percentile band across runs at each x, aligned
// as seed_band; the band is NaN where fewer than two runs have a value. Paper 003 draws the
// median of 30 seeds with a 15th-85th percentile band.
Band percentile_band(const std::vector<Curve>& runs, double lo_pct, double hi_pct);

struct PlotSeries {
  std::string label;  // legend text
  Band band;
};

struct PlotSpec {
  std::string title;    // empty: no title
  std::string x_label;  // axis labels
  std::string y_label;
  std::vector<PlotSeries> series;
  int width = 800;  // pixels
  int height = 480;
  bool log_x = false;  // base-10 logarithmic axes
  bool log_y = false;
};

// Tick values covering [lo, hi]: multiples of a step of 1, 2 or 5 times a power of ten, about
// target of them, starting at or below lo and ending at or above hi.
std::vector<double> nice_ticks(double lo, double hi, int target = 6);

// Powers of ten covering [lo, hi] (0 < lo <= hi), from the one at or below lo to the one at or
// above hi, every step-th decade with step chosen so that at most about max_ticks remain; a range
// inside one power of ten still gets two ticks.
std::vector<double> decade_ticks(double lo, double hi, int max_ticks = 10);

// Whether a series has a point that can be drawn with the spec's axes (finite x and mean, both
// positive on a log axis).
bool has_drawable_point(const PlotSeries& series, bool log_x, bool log_y);

// The SVG document. Throws DataError when no series has a drawable point.
std::string render_svg(const PlotSpec& spec);

}  // namespace dprl::tools
