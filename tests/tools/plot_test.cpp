// Tests of `dprl plot` and its parts: the metrics.csv reader, the band statistics, the SVG.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/error.hpp"
#include "engine/io.hpp"
#include "tools/metrics_csv.hpp"
#include "tools/svg_plot.hpp"
#include "tests/test_util.hpp"

namespace fs = std::filesystem;
using dprl::tools::Band;
using dprl::tools::Curve;

namespace {

using test_util::count;
using test_util::well_formed;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const dprl::Error& e) {
    return e.what();
  }
  return "";
}

dprl::tools::PlotSeries series(std::string label, std::vector<Curve> runs) {
  return {std::move(label), dprl::tools::seed_band(runs)};
}

// The vertices of the first mean line ("<path d=... fill=\"none\"") in an SVG, one list per
// "M" (a broken line has several).
std::vector<std::vector<std::pair<double, double>>> line_points(const std::string& svg) {
  const auto end = svg.find("\" fill=\"none\" stroke=");
  const auto begin = svg.rfind("<path d=\"", end);
  if (end == std::string::npos || begin == std::string::npos) return {};
  std::istringstream in(svg.substr(begin + 9, end - begin - 9));
  std::vector<std::vector<std::pair<double, double>>> parts;
  for (std::string token; in >> token;) {
    if (token[0] == 'M') parts.emplace_back();
    const auto comma = token.find(',');
    parts.back().emplace_back(std::stod(token.substr(1, comma - 1)),
                              std::stod(token.substr(comma + 1)));
  }
  return parts;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("metrics csv: header and numbers with empty cells as NaN and CRLF and blank lines") {
    const auto t = dprl::tools::parse_metrics_csv(
        "step,return_mean,\"epsilon\"\n0,1.5,\n100, 2.5 ,0.3\r\n\n200,-1e3,nan\n", "m.csv");
    REQUIRE(t.columns == std::vector<std::string>{"step", "return_mean", "epsilon"});
    REQUIRE(t.rows() == 3);
    CHECK(t.values[0] == std::vector<double>{0, 100, 200});
    CHECK(t.values[1] == std::vector<double>{1.5, 2.5, -1000});
    CHECK(std::isnan(t.values[2][0]));
    CHECK(t.values[2][1] == 0.3);
    CHECK(std::isnan(t.values[2][2]));
    CHECK(t.find("epsilon") == 2u);
    CHECK_FALSE(t.find("nope"));
    // a header alone is a valid, empty table
    CHECK(dprl::tools::parse_metrics_csv("step,r\n", "m.csv").rows() == 0);
  }

  TEST_CASE("metrics csv: malformed files name file and line") {
    using dprl::tools::parse_metrics_csv;
    CHECK(error_of([] { parse_metrics_csv("step,r\n0,1\n1,2,3\n", "m.csv"); }) ==
          "m.csv:3: expected 2 cells as in the header, got 3");
    CHECK(error_of([] { parse_metrics_csv("step,r\n0,abc\n", "m.csv"); }) ==
          "m.csv:2: column 'r': 'abc' is not a number");
    CHECK(error_of([] { parse_metrics_csv("step,r\n\n0,1x\n", "m.csv"); }) ==
          "m.csv:3: column 'r': '1x' is not a number");
    CHECK(error_of([] { parse_metrics_csv("", "m.csv"); }) ==
          "m.csv: empty file, expected a header row");
    CHECK(error_of([] { parse_metrics_csv("a,a\n", "m.csv"); }) ==
          "m.csv:1: duplicate column name 'a' in the header");
    CHECK(error_of([] { parse_metrics_csv("a,,b\n", "m.csv"); }) ==
          "m.csv:1: empty column name in the header (column 2)");
    CHECK(error_of([] { parse_metrics_csv("a,\"b\n", "m.csv"); }) ==
          "m.csv:1: unterminated quoted cell");
    CHECK_THROWS_AS(parse_metrics_csv("step,r\n0\n", "m.csv"), dprl::DataError);
    // an unknown column is a parameter error listing the valid ones
    const auto t = parse_metrics_csv("step,r\n0,1\n", "m.csv");
    CHECK_THROWS_AS(t.column("q", "--y"), dprl::ParamError);
    CHECK(error_of([&] { t.column("q", "--y"); }) ==
          "--y: unknown column 'q' in m.csv; valid: step, r");
    CHECK(error_of([] { dprl::tools::read_metrics_csv("/nonexistent/metrics.csv"); }) ==
          "cannot read /nonexistent/metrics.csv: no such file");
  }

  TEST_CASE("student t quantiles: table values and the large-dof limit") {
    using dprl::tools::student_t_975;
    CHECK(student_t_975(1) == 12.706204736);
    CHECK(student_t_975(2) == 4.302652730);
    CHECK(student_t_975(9) == 2.262157163);
    CHECK(student_t_975(30) == 2.042272456);
    CHECK(student_t_975(60) == 2.000297822);
    // interpolated in 1/dof; references from the incomplete beta function (t(45) = 2.014103359,
    // t(200) = 1.971896224, t(1000) = 1.962339081); the interpolation is good to 1e-4
    CHECK(student_t_975(45) == doctest::Approx(2.014103359).epsilon(5e-5));
    CHECK(student_t_975(200) == doctest::Approx(1.971896224).epsilon(5e-5));
    CHECK(student_t_975(1000) == doctest::Approx(1.962339081).epsilon(5e-5));
    for (int d = 1; d < 500; ++d) CHECK(student_t_975(d + 1) < student_t_975(d));
  }

  TEST_CASE("seed band: mean and 95% interval by hand") {
    const double nan = std::nan("");
    // at x=0 three runs (1, 2, 3); at x=1 two runs (10, 14) and one NaN; at x=2 one run
    const Band b = dprl::tools::seed_band(
        {{{0, 1, 2}, {1, 10, 7}}, {{0, 1}, {2, 14}}, {{0, 1, nan}, {3, nan, 5}}});
    REQUIRE(b.x == std::vector<double>{0, 1, 2});
    CHECK(b.n == std::vector<int>{3, 2, 1});
    CHECK(b.mean == std::vector<double>{2, 12, 7});
    // x=0: sd = 1, half = t(2) / sqrt(3) = 4.302652730 / 1.7320508 = 2.484137712
    CHECK(b.lower[0] == doctest::Approx(2 - 2.484137712).epsilon(1e-9));
    CHECK(b.upper[0] == doctest::Approx(2 + 2.484137712).epsilon(1e-9));
    // x=1: sd = 2 sqrt(2), half = t(1) * 2 sqrt(2) / sqrt(2) = 2 * 12.706204736
    CHECK(b.lower[1] == doctest::Approx(12 - 25.412409472).epsilon(1e-12));
    CHECK(b.upper[1] == doctest::Approx(12 + 25.412409472).epsilon(1e-12));
    // x=2: one run, no band
    CHECK(std::isnan(b.lower[2]));
    CHECK(std::isnan(b.upper[2]));
  }

  TEST_CASE("seed band: repeated x within a run and unsorted x and identical runs") {
    const Band b = dprl::tools::seed_band({{{5, 0, 5}, {1, 4, 3}}, {{0, 5}, {4, 2}}});
    REQUIRE(b.x == std::vector<double>{0, 5});
    CHECK(b.mean == std::vector<double>{4, 2});  // run 1 contributes (1 + 3) / 2 at x=5
    CHECK(b.lower[1] == 2);                      // zero spread: a zero-width band
    CHECK(b.upper[1] == 2);
    CHECK(dprl::tools::seed_band({}).x.empty());
  }

  TEST_CASE("nice ticks: steps of 1 or 2 or 5 times a power of ten covering the range") {
    using dprl::tools::nice_ticks;
    CHECK(nice_ticks(0, 1000) == std::vector<double>{0, 200, 400, 600, 800, 1000});
    CHECK(nice_ticks(-3, 7) == std::vector<double>{-4, -2, 0, 2, 4, 6, 8});
    const auto t = nice_ticks(0.13, 0.87);
    REQUIRE(t.size() == 6);
    CHECK(t.front() == 0);
    CHECK(t[1] == doctest::Approx(0.2));
    CHECK(t.back() == doctest::Approx(1.0));
  }

  TEST_CASE("svg: well formed with one band and one line per multi-seed series and legend labels") {
    dprl::tools::PlotSpec spec;
    spec.title = "Taxi <quickstart>";
    spec.x_label = "step";
    spec.y_label = "return_mean";
    spec.series.push_back(series(
        "q & learning (n=2)", {{{0, 100, 200}, {-200, -50, 5}}, {{0, 100, 200}, {-180, -30, 8}}}));
    spec.series.push_back(series("random (n=3)", {{{0, 100, 200}, {-700, -690, -710}},
                                                  {{0, 100, 200}, {-720, -700, -705}},
                                                  {{0, 100, 200}, {-710, -695, -700}}}));
    const std::string svg = dprl::tools::render_svg(spec);
    CHECK(svg.rfind("<?xml", 0) == 0);
    CHECK(count(svg, "<svg ") == 1);
    CHECK(count(svg, "</svg>") == 1);
    CHECK(svg.find("</svg>\n") == svg.size() - 7);
    CHECK(well_formed(svg));
    CHECK(count(svg, "<path ") == 4);
    CHECK(count(svg, "fill-opacity=\"0.2\" stroke=\"none\"") == 2);  // the bands
    CHECK(svg.find(">q &amp; learning (n=2)</text>") != std::string::npos);
    CHECK(svg.find(">random (n=3)</text>") != std::string::npos);
    CHECK(svg.find("Taxi &lt;quickstart&gt;") != std::string::npos);
    CHECK(svg.find(">return_mean</text>") != std::string::npos);
    CHECK(svg.find("#1f77b4") != std::string::npos);
    CHECK(svg.find("#ff7f0e") != std::string::npos);
    CHECK(svg.find("nan") == std::string::npos);
    CHECK(svg.find("inf") == std::string::npos);
  }

  TEST_CASE("svg: a single seed has no band and NaNs are skipped and no title is fine") {
    const double nan = std::nan("");
    dprl::tools::PlotSpec spec;
    spec.x_label = "step";
    spec.y_label = "r";
    spec.series.push_back(series("one", {{{0, 1, 2, 3, 4}, {1, 2, nan, 4, 5}}}));
    const std::string svg = dprl::tools::render_svg(spec);
    CHECK(well_formed(svg));
    CHECK(count(svg, "<path ") == 1);  // the line only
    CHECK(svg.find("fill-opacity=\"0.2\"") == std::string::npos);
    CHECK(svg.find("<title>") == std::string::npos);
    CHECK(svg.find("nan") == std::string::npos);
    // an isolated point is drawn as a dot
    dprl::tools::PlotSpec dot = spec;
    dot.series = {series("dot", {{{7}, {3}}})};
    const std::string svg2 = dprl::tools::render_svg(dot);
    CHECK(well_formed(svg2));
    CHECK(count(svg2, "<circle ") == 1);
    // large x values get k/M labels
    dprl::tools::PlotSpec big = spec;
    big.series = {series("big", {{{0, 500000, 1000000}, {1, 2, 3}}})};
    CHECK(dprl::tools::render_svg(big).find(">1.0M</text>") != std::string::npos);
  }

  TEST_CASE("decade ticks: powers of ten covering the range, thinned over many decades") {
    using dprl::tools::decade_ticks;
    CHECK(decade_ticks(1, 100) == std::vector<double>{1, 10, 100});
    CHECK(decade_ticks(3, 70) == std::vector<double>{1, 10, 100});
    CHECK(decade_ticks(1000, 1000) == std::vector<double>{1000, 10000});  // one value: two ticks
    CHECK(decade_ticks(0.002, 5) == std::vector<double>{1e-3, 1e-2, 1e-1, 1, 10});
    // 15 decades, at most about 10 ticks: every second decade, -4 to 12
    const auto wide = decade_ticks(1e-3, 1e12);
    REQUIRE(wide.size() == 9);
    CHECK(wide.front() == 1e-4);
    CHECK(wide[1] == 1e-2);
    CHECK(wide.back() == 1e12);
  }

  TEST_CASE("svg log axes: 1, 10, 100 equally spaced and sqrt(10) at the quarter") {
    // on linear axes the gaps would be 9 and 90; coordinates are printed with 2 decimals, so each
    // is within 0.005 of the exact value and a difference of two within 0.01
    dprl::tools::PlotSpec spec;
    spec.x_label = "episode";
    spec.y_label = "regret";
    spec.log_x = true;
    spec.log_y = true;
    spec.series.push_back(series("r", {{{1, std::sqrt(10.0), 10, 100}, {1, 10, 100, 1000}}}));
    const std::string svg = dprl::tools::render_svg(spec);
    CHECK(well_formed(svg));
    const auto parts = line_points(svg);
    REQUIRE(parts.size() == 1);
    const auto& p = parts[0];
    REQUIRE(p.size() == 4);
    const double dx = p[3].first - p[0].first;
    CHECK(dx > 100);
    CHECK(std::abs((p[1].first - p[0].first) - dx / 4) <= 0.01);
    CHECK(std::abs((p[2].first - p[0].first) - dx / 2) <= 0.01);
    // y: 1, 10, 100, 1000 are three equal steps upwards (svg y grows downwards)
    const double dy1 = p[0].second - p[1].second, dy2 = p[1].second - p[2].second,
                 dy3 = p[2].second - p[3].second;
    CHECK(dy1 > 50);
    CHECK(std::abs(dy2 - dy1) <= 0.02);
    CHECK(std::abs(dy3 - dy1) <= 0.02);
    // decade labels
    CHECK(svg.find(">1</text>") != std::string::npos);
    CHECK(svg.find(">10</text>") != std::string::npos);
    CHECK(svg.find(">100</text>") != std::string::npos);
    CHECK(svg.find(">1e3</text>") != std::string::npos);
    CHECK(svg.find(">0</text>") == std::string::npos);
    // the same data on linear axes is not equally spaced
    spec.log_x = spec.log_y = false;
    const auto lin = line_points(dprl::tools::render_svg(spec));
    REQUIRE(lin.size() == 1);
    CHECK(lin[0][2].first - lin[0][1].first > 2 * (lin[0][1].first - lin[0][0].first));
  }

  TEST_CASE("svg log axes: non-positive x or mean is skipped and breaks the line") {
    dprl::tools::PlotSpec spec;
    spec.x_label = "x";
    spec.y_label = "y";
    spec.log_x = true;
    spec.series.push_back(series("r", {{{-1, 0, 1, 10, 100}, {-5, 7, 1, 10, 100}}}));
    std::string svg = dprl::tools::render_svg(spec);
    CHECK(well_formed(svg));
    auto parts = line_points(svg);
    REQUIRE(parts.size() == 1);
    CHECK(parts[0].size() == 3);  // x = -1 and x = 0 left out
    CHECK(svg.find("nan") == std::string::npos);
    CHECK(svg.find("inf") == std::string::npos);
    // log y: a zero mean in the middle splits the line in two
    spec.log_x = false;
    spec.log_y = true;
    spec.series = {series("r", {{{1, 2, 3, 4, 5, 6}, {0, 1, 10, 0, 10, 100}}})};
    svg = dprl::tools::render_svg(spec);
    parts = line_points(svg);
    REQUIRE(parts.size() == 2);
    CHECK(parts[0].size() == 2);
    CHECK(parts[1].size() == 2);
    // the y axis starts at the smallest positive value's decade, not at 0
    CHECK(svg.find(">1</text>") != std::string::npos);
    CHECK(svg.find(">0</text>") == std::string::npos);
    // a band reaching below zero is drawn (off the bottom, clipped) and prints no infinities
    spec.series = {series("two", {{{1, 10, 100}, {0.001, 10, 100}}, {{1, 10, 100}, {2, 12, 90}}})};
    svg = dprl::tools::render_svg(spec);
    CHECK(well_formed(svg));
    CHECK(count(svg, "fill-opacity=\"0.2\" stroke=\"none\"") == 1);
    CHECK(svg.find("nan") == std::string::npos);
    CHECK(svg.find("inf") == std::string::npos);
    // nothing positive: has_drawable_point says so and render_svg refuses
    const auto none = series("none", {{{1, 2}, {0, -1}}});
    CHECK(dprl::tools::has_drawable_point(none, false, false));
    CHECK_FALSE(dprl::tools::has_drawable_point(none, false, true));
    CHECK(dprl::tools::has_drawable_point(none, true, false));
    spec.series = {none};
    CHECK_THROWS_AS(dprl::tools::render_svg(spec), dprl::DataError);
  }

  TEST_CASE("svg: nothing finite to plot is a DataError") {
    const double nan = std::nan("");
    dprl::tools::PlotSpec spec;
    CHECK_THROWS_AS(dprl::tools::render_svg(spec), dprl::DataError);
    spec.series.push_back(series("empty", {{{0, 1}, {nan, nan}}}));
    CHECK_THROWS_AS(dprl::tools::render_svg(spec), dprl::DataError);
  }
}

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("dprl_plot_test_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write_run(const fs::path& dir, const std::string& algo, int seed, const std::string& csv) {
  fs::create_directories(dir);
  dprl::write_file_atomic(dir / "metrics.csv", csv);
  dprl::write_file_atomic(dir / "config.yaml",
                          "name: quick\nseed: " + std::to_string(seed) + "\nout: " + dir.string() +
                              "\nenv:\n  id: taxi\nalgo:\n  id: " + algo + "\n");
  dprl::write_file_atomic(dir / "summary.json", "{\"seed\": " + std::to_string(seed) + "}\n");
}

// Runs a shell command; returns its exit status.
int run_shell(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string dprl_exe() { return std::string("'") + DPRL_EXE + "'"; }

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("dprl plot: two configurations across seeds to an SVG and bad input fails cleanly") {
    TempDir tmp;
    const fs::path runs = tmp.path / "runs";
    write_run(runs / "q_seed1", "q_learning", 1, "step,return_mean\n0,-200\n100,-20\n200,7\n");
    write_run(runs / "q_seed2", "q_learning", 2, "step,return_mean\n0,-190\n100,-10\n200,8\n");
    write_run(runs / "rand_seed1", "random", 1, "step,return_mean\n0,-700\n100,-720\n200,\n");
    const std::string dirs = "'" + (runs / "q_seed1").string() + "' '" +
                             (runs / "q_seed2").string() + "' '" + (runs / "rand_seed1").string() +
                             "'";
    const fs::path svg = tmp.path / "x.svg";
    const fs::path err = tmp.path / "err.txt";

    CHECK(run_shell(dprl_exe() + " plot " + dirs + " --y return_mean -o '" + svg.string() +
              "' --title Taxi > /dev/null 2> '" + err.string() + "'") == 0);
    REQUIRE(fs::exists(svg));
    const std::string text = dprl::read_file(svg);
    CHECK(well_formed(text));
    CHECK(text.find(">q (n=2)</text>") != std::string::npos);
    CHECK(text.find(">rand (n=1)</text>") != std::string::npos);
    CHECK(count(text, "<path ") == 3);  // q: band + line, rand: line
    CHECK(dprl::read_file(err).empty());

    // an unknown column: exit 2, one line naming the flag and the valid columns, no output
    const fs::path bad = tmp.path / "bad.svg";
    CHECK(run_shell(dprl_exe() + " plot " + dirs + " --y nope -o '" + bad.string() + "' 2> '" +
              err.string() + "'") == 2);
    CHECK_FALSE(fs::exists(bad));
    const std::string msg = dprl::read_file(err);
    CHECK(count(msg, "\n") == 1);
    CHECK(msg.rfind("dprl: --y: unknown column 'nope' in ", 0) == 0);
    CHECK(msg.find("valid: step, return_mean") != std::string::npos);

    // a missing run directory and a malformed metrics.csv name the culprit
    CHECK(run_shell(dprl_exe() + " plot '" + (runs / "absent").string() + "' --y return_mean -o '" +
              bad.string() + "' 2> '" + err.string() + "'") == 2);
    CHECK(dprl::read_file(err).find("absent") != std::string::npos);
    write_run(runs / "broken", "q_learning", 3, "step,return_mean\n0,1\n1,2,3\n");
    CHECK(run_shell(dprl_exe() + " plot '" + (runs / "broken").string() + "' --y return_mean -o '" +
              bad.string() + "' 2> '" + err.string() + "'") == 2);
    CHECK(dprl::read_file(err).find("metrics.csv:3: expected 2 cells") != std::string::npos);
    CHECK_FALSE(fs::exists(bad));
    // nothing half-written is left beside the output
    int leftovers = 0;
    for (const auto& e : fs::directory_iterator(tmp.path))
      leftovers += e.path().filename().string().find(".tmp.") != std::string::npos;
    CHECK(leftovers == 0);
  }

  TEST_CASE("dprl plot: CSV files in one folder are grouped by their names without the seed") {
    TempDir tmp;
    const fs::path d = tmp.path / "data";
    fs::create_directories(d);
    dprl::write_file_atomic(d / "fig_ours_seed1.csv", "eps,score\n5,0.1\n10,0.5\n");
    dprl::write_file_atomic(d / "fig_ours_seed2.csv", "eps,score\n5,0.3\n10,0.7\n");
    dprl::write_file_atomic(d / "fig_dp_sgd_seed1.csv", "eps,score\n5,0.0\n10,0.2\n");
    const fs::path svg = tmp.path / "f.svg";
    CHECK(run_shell(dprl_exe() + " plot '" + (d / "fig_ours_seed1.csv").string() + "' '" +
              (d / "fig_ours_seed2.csv").string() + "' '" + (d / "fig_dp_sgd_seed1.csv").string() +
              "' --x eps --y score -o '" + svg.string() + "' 2> /dev/null") == 0);
    const std::string text = dprl::read_file(svg);
    CHECK(text.find(">fig_ours (n=2)</text>") != std::string::npos);
    CHECK(text.find(">fig_dp_sgd (n=1)</text>") != std::string::npos);
    CHECK(text.find(">data (n=") == std::string::npos);
  }

  TEST_CASE("dprl plot --log-x --log-y: decades, and no positive values fails with one line") {
    TempDir tmp;
    const fs::path runs = tmp.path / "runs";
    write_run(runs / "a_seed1", "lsvi", 1,
              "episode,regret,zero\n0,0,0\n1,1,0\n10,10,0\n100,100,0\n");
    const std::string dir = "'" + (runs / "a_seed1").string() + "'";
    const fs::path svg = tmp.path / "log.svg";
    const fs::path err = tmp.path / "err.txt";
    CHECK(run_shell(dprl_exe() + " plot " + dir + " --x episode --y regret --log-x --log-y -o '" +
              svg.string() + "' > /dev/null 2> '" + err.string() + "'") == 0);
    REQUIRE(fs::exists(svg));
    const std::string text = dprl::read_file(svg);
    CHECK(well_formed(text));
    const auto parts = line_points(text);
    REQUIRE(parts.size() == 1);
    REQUIRE(parts[0].size() == 3);  // the row at episode 0 is left out
    CHECK(std::abs((parts[0][1].first - parts[0][0].first) -
                   (parts[0][2].first - parts[0][1].first)) <= 0.01);
    CHECK(dprl::read_file(err).empty());

    // an all-zero column on a log axis: exit 2, one line naming the flag and column, no output
    const fs::path bad = tmp.path / "bad.svg";
    CHECK(run_shell(dprl_exe() + " plot " + dir + " --x episode --y zero --log-y -o '" + bad.string() +
              "' 2> '" + err.string() + "'") == 2);
    CHECK(dprl::read_file(err) == "dprl: --log-y: no positive values in column 'zero'\n");
    CHECK_FALSE(fs::exists(bad));
    CHECK(run_shell(dprl_exe() + " plot " + dir + " --x zero --y regret --log-x --log-y -o '" +
              bad.string() + "' 2> '" + err.string() + "'") == 2);
    CHECK(dprl::read_file(err) == "dprl: --log-x: no positive values in column 'zero'\n");
    CHECK_FALSE(fs::exists(bad));
  }
}

TEST_SUITE("unit") {
  TEST_CASE("percentile_band: median and 15th-85th percentiles by linear interpolation") {
    // numpy.percentile([1, 2, 3, 4], [15, 50, 85]) = [1.45, 2.5, 3.55]
    CHECK(dprl::tools::percentile({4, 1, 3, 2}, 15) == doctest::Approx(1.45));
    CHECK(dprl::tools::percentile({4, 1, 3, 2}, 50) == doctest::Approx(2.5));
    CHECK(dprl::tools::percentile({4, 1, 3, 2}, 85) == doctest::Approx(3.55));
    CHECK(dprl::tools::percentile({7}, 85) == 7);
    // five runs at x = 0 (values 10, 50, 20, 40, 30) and one at x = 1
    std::vector<Curve> runs{{{0, 1}, {10, 5}}, {{0}, {50}}, {{0}, {20}}, {{0}, {40}}, {{0}, {30}}};
    const Band b = dprl::tools::percentile_band(runs, 15, 85);
    REQUIRE(b.x.size() == 2);
    CHECK(b.mean[0] == 30);                    // the median
    CHECK(b.lower[0] == doctest::Approx(16));  // h = 0.6: 10 + 0.6 * 10
    CHECK(b.upper[0] == doctest::Approx(44));  // h = 3.4: 40 + 0.4 * 10
    CHECK(b.n[0] == 5);
    CHECK(b.mean[1] == 5);
    CHECK(std::isnan(b.lower[1]));  // one run: no band
  }
}

TEST_SUITE("e2e") {
  TEST_CASE("dprl plot --stat median draws the percentile band and bad --percentiles exit 2") {
    TempDir tmp;
    const fs::path runs = tmp.path / "runs";
    std::string dirs;
    for (int s = 1; s <= 5; ++s) {
      const auto d = runs / ("m_seed" + std::to_string(s));
      write_run(d, "ppo", s, "step,train_return\n0," + std::to_string(10 * s) + "\n1,5\n");
      dirs += " '" + d.string() + "'";
    }
    const fs::path svg = tmp.path / "m.svg";
    const fs::path err = tmp.path / "err.txt";
    CHECK(run_shell(dprl_exe() + " plot" + dirs + " --y train_return --stat median -o '" + svg.string() +
              "' > /dev/null 2> '" + err.string() + "'") == 0);
    REQUIRE(fs::exists(svg));
    CHECK(well_formed(dprl::read_file(svg)));
    CHECK(count(dprl::read_file(svg), "<path ") == 2);  // band + line
    for (const char* bad : {"90,10", "15", "-1,50", "15,101"}) {
      CAPTURE(bad);
      CHECK(run_shell(dprl_exe() + " plot" + dirs + " --y train_return --stat median --percentiles " +
                bad + " -o '" + (tmp.path / "bad.svg").string() + "' 2> '" + err.string() + "'") ==
            2);
      CHECK(dprl::read_file(err).find("--percentiles") != std::string::npos);
      CHECK_FALSE(fs::exists(tmp.path / "bad.svg"));
    }
  }
}
