// The pages of dprl report (tools/html_report.hpp, docs/report.md).
#include "tools/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algos/core/policies.hpp"
#include "algos/run/sweep.hpp"
#include "engine/config.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "envs/register_envs.hpp"
#include "envs/render.hpp"
#include "tools/cli.hpp"
#include "tools/metrics_csv.hpp"
#include "tools/svg_plot.hpp"

namespace dprl::tools {
// the page's helpers, in a namespace of their own: the unity batches share anonymous namespaces
namespace report_page {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// s escaped for HTML text and attribute values (line feeds kept)
std::string esc(std::string_view s) { return envs::xml_escape(s, true); }

// a figure with `digits` significant digits; non-finite as words
std::string fig(double v, int digits = 4) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return v > 0 ? "infinite" : "-infinite";
  return fmt::format("{:.{}g}", v, digits);
}

// a JSON value as page text: strings as they are, numbers with 6 digits, the rest as JSON
std::string json_text(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fig(v.get<double>(), 6);
  if (v.is_array()) {
    std::string out;
    for (const auto& e : v) out += (out.empty() ? "" : "; ") + json_text(e);
    return out;
  }
  return v.dump();
}

// a relative path as a URL: every byte but the unreserved ones and '/' percent-encoded
std::string href(const fs::path& rel) {
  std::string out;
  for (const unsigned char c : rel.generic_string()) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/')
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

// target relative to the folder of the page at `page`
fs::path relative_to_page(const fs::path& target, const fs::path& page) {
  const fs::path from = fs::absolute(page).lexically_normal().parent_path();
  return fs::absolute(target).lexically_normal().lexically_relative(from);
}

// The parts every page shares: styles, the player script, the document frame.
constexpr const char* kStyle = R"(
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
header{background:#1f3a5f;color:#fff;padding:18px 32px}
header h1{margin:0;font-size:24px}
header p{margin:4px 0 0;color:#d6e0ee}
main{max-width:1240px;margin:0 auto;padding:16px 32px 40px}
section{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:12px 20px;margin:16px 0}
h2{font-size:19px;margin:6px 0 10px;color:#1f3a5f}
h3{font-size:15px;margin:14px 0 6px}
table{border-collapse:collapse;font-size:14px;margin:6px 0}
th,td{border:1px solid #dde1e7;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5}
td.num{text-align:right;font-variant-numeric:tabular-nums}
pre{background:#f6f8fa;border:1px solid #dde1e7;padding:10px;overflow:auto;font-size:13px}
code{font-size:13px;overflow-wrap:anywhere}
.hero{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}
.hero .player,.hero .player-missing{flex:0 1 600px;max-width:600px}
.hero .figures{flex:1 1 320px}
.player svg{max-width:100%;height:auto;border:1px solid #dde1e7;display:block}
.controls{display:flex;gap:10px;align-items:center;margin-top:6px;font-size:14px}
.controls input{flex:1 1 auto}
.plots{display:flex;flex-wrap:wrap;gap:12px}
.plots svg{max-width:100%;height:auto;border:1px solid #eef1f5}
.note{color:#5a6372;font-size:13px}
.private{border-left:6px solid #2e7d32}
.not-private{border-left:6px solid #b26a00}
.private.not-formal{border-left:6px solid #c9a227}
.verdict-ok{color:#2e7d32;font-weight:bold}
.verdict-bad{color:#b00020;font-weight:bold}
.bad{color:#b00020}
dl.words{display:grid;grid-template-columns:200px 1fr;gap:6px 16px;margin:8px 0}
dl.words dt{font-weight:bold}
dl.words dd{margin:0}
)";

// Plays every .player's frames (the top-level <g> elements of its SVG): one every 1 / fps s,
// looping, with a play/pause button and a frame slider. data-frame holds the frame shown.
constexpr const char* kScript = R"(
(function () {
  document.querySelectorAll('.player').forEach(function (box) {
    var svg = box.querySelector('svg');
    var frames = Array.prototype.filter.call(svg.children, function (e) {
      return e.tagName.toLowerCase() === 'g';
    });
    var n = frames.length, fps = parseFloat(box.getAttribute('data-fps')) || 10;
    var slider = box.querySelector('input'), button = box.querySelector('button');
    var label = box.querySelector('.frame-label');
    var i = 0, timer = null;
    function show(k) {
      frames[i].setAttribute('display', 'none');
      i = k;
      frames[i].removeAttribute('display');
      slider.value = String(i);
      label.textContent = 'frame ' + (i + 1) + ' / ' + n;
      box.setAttribute('data-frame', String(i));
    }
    function play(on) {
      if (timer !== null) clearInterval(timer);
      timer = on ? setInterval(function () { show((i + 1) % n); }, 1000 / fps) : null;
      button.textContent = on ? 'Pause' : 'Play';
    }
    slider.addEventListener('input', function () { play(false); show(parseInt(slider.value, 10)); });
    button.addEventListener('click', function () { play(timer === null); });
    play(n > 1);
  });
})();
)";

std::string document(const std::string& title, const std::string& subtitle,
                     const std::string& body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
      "<title>{0}</title>\n<style>{2}</style>\n</head>\n<body>\n"
      "<header><h1>{0}</h1><p>{1}</p></header>\n<main>\n{3}</main>\n<script>{4}</script>\n"
      "</body>\n</html>\n",
      esc(title), subtitle, kStyle, body, kScript);
}

// An SVG document (svg_plot, the renderers) for inline use: without its XML prolog, with its
// clip path's id made unique on the page.
std::string inline_svg(std::string svg, int& counter) {
  const auto start = svg.find("<svg");
  if (start != std::string::npos) svg.erase(0, start);
  const std::string id = "dprl-plot-area";
  const std::string unique = fmt::format("{}-{}", id, ++counter);
  for (auto at = svg.find(id); at != std::string::npos; at = svg.find(id, at + unique.size()))
    svg.replace(at, id.size(), unique);
  return svg;
}

std::string plot_or_note(const PlotSpec& spec, int& counter) {
  try {
    return inline_svg(render_svg(spec), counter);
  } catch (const Error& e) {
    return fmt::format("<p class=\"note\">{}: {}</p>", esc(spec.title), esc(e.what()));
  }
}

// One series from x and y columns (no band).
PlotSeries line_series(std::string label, const std::vector<double>& x,
                       const std::vector<double>& y) {
  return {std::move(label), seed_band({Curve{x, y}})};
}

// ---- files ---------------------------------------------------------------------------------

// A JSON file's object, or the reason it could not be read (never throws).
struct JsonFile {
  std::optional<Json> value;
  std::string problem;  // "" when read or absent
  bool present = false;
};

JsonFile read_json_optional(const fs::path& path) {
  JsonFile f;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return f;
  f.present = true;
  if (const std::string p = file_problem(path); !p.empty()) {
    f.problem = p;
    return f;
  }
  try {
    Json j = Json::parse(read_file(path), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object())
      f.problem = "not a JSON object";
    else
      f.value = std::move(j);
  } catch (const std::exception& e) {
    f.problem = e.what();
  }
  return f;
}

// summary.json: required, an object with a privacy entry (null or an object); DataError naming
// the file otherwise.
Json read_summary(const fs::path& dir) {
  const fs::path path = dir / "summary.json";
  if (const std::string p = file_problem(path); !p.empty())
    throw DataError(fmt::format("{}: {}", path.string(), p));
  const Json j = Json::parse(read_file(path), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw DataError(fmt::format("{}: not valid JSON", path.string()));
  if (!j.is_object()) throw DataError(fmt::format("{}: not a JSON object", path.string()));
  if (!j.contains("privacy"))
    throw DataError(
        fmt::format("{}: no \"privacy\" entry (not a dprl run summary)", path.string()));
  const Json& p = j["privacy"];
  if (!p.is_null() && !p.is_object())
    throw DataError(fmt::format("{}: \"privacy\" must be null or an object", path.string()));
  if (p.is_object()) {
    const auto& e = p.contains("epsilon") ? p["epsilon"] : Json();
    if (!e.is_number() && !(e.is_string() && e.get<std::string>() == "inf"))
      throw DataError(
          fmt::format("{}: privacy.epsilon must be a number or \"inf\"", path.string()));
    if (!p.contains("delta") || !p["delta"].is_number())
      throw DataError(fmt::format("{}: privacy.delta must be a number", path.string()));
  }
  return j;
}

std::string str_of(const Json& j, const char* key, const std::string& dflt = "") {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : dflt;
}
double num_of(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return NAN;
  const Json& v = j[key];
  if (v.is_number()) return v.get<double>();
  if (v.is_string() && v.get<std::string>() == "inf") return INFINITY;
  return NAN;
}

// A table of key/value rows from a JSON object (nested objects flattened as a.b).
void flatten(const Json& j, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& rows) {
  for (const auto& [k, v] : j.items()) {
    const std::string key = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object())
      flatten(v, key, rows);
    else
      rows.emplace_back(key, json_text(v));
  }
}

std::string kv_table(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string t = "<table>\n";
  for (const auto& [k, v] : rows)
    t += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", esc(k), esc(v));
  return t + "</table>\n";
}

// ---- the run page ---------------------------------------------------------------------------

struct RunPage {
  std::string html;
  std::optional<MetricsTable> metrics;
};

std::string return_column(const MetricsTable& t) {
  if (t.find("return_mean")) return "return_mean";
  if (t.find("return")) return "return";
  return "";
}

bool has_finite(const std::vector<double>& v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

std::string relation_words(const std::string& neighbouring, const std::string& unit) {
  const std::string u = unit.empty() ? "unit" : unit;
  if (neighbouring == "replace")
    return fmt::format(
        "two data sets are neighbours when they differ in one {0} only: one {0}'s data replaced "
        "by anything else (replace-one)",
        esc(u));
  if (neighbouring == "add-remove")
    return fmt::format(
        "two data sets are neighbours when one is the other with one {0} added or removed "
        "(add/remove-one)",
        esc(u));
  return fmt::format("neighbouring relation \"{}\" over one {}", esc(neighbouring), esc(u));
}

std::string accountant_words(const std::string& a) {
  if (a == "rdp")
    return "rdp: R&#233;nyi differential privacy accounting of the composed releases, converted "
           "to (&#949;, &#948;)";
  if (a == "pld") return "pld: privacy loss distributions of the releases composed numerically";
  if (a == "best") return "best: the smaller of the RDP and PLD accountants' epsilons";
  if (a == "basic") return "basic: basic composition (the releases' epsilons and deltas add up)";
  return esc(a);
}

std::string noise_words(const std::string& source, bool reproducible) {
  if (reproducible)
    return esc(source) +
           ": seeded, so reproducible. Anyone who holds the seed can regenerate the noise and "
           "subtract it; against them the noise protects nothing";
  if (source.find("os_entropy") != std::string::npos ||
      source.find("os-entropy") != std::string::npos)
    return esc(source) + ": drawn from the operating system's entropy; nobody can regenerate it";
  return esc(source);
}

std::string list_items(const std::vector<std::string>& items) {
  if (items.empty()) return "<p class=\"note\">(none listed)</p>\n";
  std::string out = "<ul>\n";
  for (const auto& s : items) out += "<li>" + esc(s) + "</li>\n";
  return out + "</ul>\n";
}

std::vector<std::string> strings_of(const Json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.is_object() || !j.contains(key)) return out;
  const Json& v = j[key];
  if (v.is_array()) {
    for (const auto& e : v) out.push_back(json_text(e));
  } else if (!v.is_null()) {
    out.push_back(json_text(v));
  }
  return out;
}

// the audit's lower bound beside the claim: words and two bars
std::string audit_block(const Json& a) {
  const double lower = num_of(a, "epsilon_lower");
  double claim = num_of(a, "epsilon_claimed");
  if (std::isnan(claim)) claim = num_of(a, "epsilon_reported");
  const double conf = num_of(a, "confidence");
  const bool refuted =
      a.contains("refuted") && a["refuted"].is_boolean() && a["refuted"].get<bool>();
  std::string out = "<h3>Empirical audit</h3>\n";
  out += fmt::format(
      "<p id=\"audit\">{} found <b>&#949; &#8805; <span id=\"audit-lower\" data-value=\"{}\">{}"
      "</span></b> with confidence {} ({} canaries), beside the claimed <b>&#949; = {}</b>: ",
      esc(str_of(a, "kind", "an audit")),
      a.contains("epsilon_lower") ? esc(a["epsilon_lower"].dump()) : "", fig(lower), fig(conf, 3),
      fig(num_of(a, "canaries"), 6), fig(claim));
  out += refuted ? "<span class=\"verdict-bad\">the audit refutes the claim: its lower bound "
                   "exceeds the claimed epsilon.</span>"
                 : "<span class=\"verdict-ok\">consistent with the claim</span> (a lower bound "
                   "below the claim does not prove the claim; it only fails to refute it).";
  out += "</p>\n";
  const double top =
      std::max({std::isfinite(lower) ? lower : 0.0, std::isfinite(claim) ? claim : 0.0, 1e-12});
  auto bar = [&](double y, double v, const char* label, const char* colour) {
    const double w = std::isfinite(v) ? 380.0 * std::max(v, 0.0) / top : 0.0;
    return fmt::format(
        "<text x=\"0\" y=\"{0}\" font-size=\"13\">{1}</text><rect x=\"150\" y=\"{2}\" "
        "width=\"{3:.1f}\" height=\"18\" fill=\"{4}\"/><text x=\"{5:.1f}\" y=\"{0}\" "
        "font-size=\"13\">{6}</text>",
        y + 14, label, y, w, colour, 156 + w, esc(fig(v)));
  };
  out +=
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"52\" "
      "viewBox=\"0 0 600 52\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">" +
      bar(2, lower, "audit lower bound", refuted ? "#b00020" : "#4e79a7") +
      bar(28, claim, "claimed epsilon", "#59a14f") + "</svg>\n";
  return out;
}

// privacy_ledger.json: budget, charges and epsilon over the charges
std::string ledger_block(const fs::path& dir, int& counter) {
  const fs::path path = dir / "privacy_ledger.json";
  const JsonFile f = read_json_optional(path);
  if (!f.present) return "";
  std::string out = "<h3>Privacy ledger (privacy_ledger.json)</h3>\n";
  if (!f.value)
    return out + fmt::format("<p class=\"bad\">privacy_ledger.json could not be read: {}</p>\n",
                             esc(f.problem));
  const Json& l = *f.value;
  const Json budget = l.contains("budget") ? l["budget"] : Json::object();
  const Json charges =
      l.contains("charges") && l["charges"].is_array() ? l["charges"] : Json::array();
  const double spent = charges.empty() ? 0.0 : num_of(charges.back(), "epsilon_after");
  out += fmt::format(
      "<p>Budget &#949; = {} at &#948; = {}; spent &#949; = <span id=\"ledger-spent\">{}</span> "
      "over {} charges ({} accountant). Every release is charged here before it happens, so the "
      "ledger can be ahead of the epsilon of what was released (summary.json's), and a ledger "
      "shared by several runs holds all their charges.</p>\n",
      fig(num_of(budget, "epsilon")), fig(num_of(budget, "delta"), 3), fig(spent), charges.size(),
      esc(str_of(l, "accountant")));
  std::vector<double> x{0}, y{0}, b;
  double count = 0;
  for (const auto& c : charges) {
    count += num_of(c, "count");
    x.push_back(count);
    y.push_back(num_of(c, "epsilon_after"));
  }
  if (!charges.empty()) {
    PlotSpec spec;
    spec.title = "epsilon spent over the ledger's charges";
    spec.x_label = "charged steps (cumulative count)";
    spec.y_label = "epsilon";
    spec.width = 520;
    spec.height = 300;
    spec.series.push_back(line_series("spent", x, y));
    if (const double be = num_of(budget, "epsilon"); std::isfinite(be))
      spec.series.push_back(line_series("budget", {0, count}, {be, be}));
    out += "<div class=\"plots\">" + plot_or_note(spec, counter) + "</div>\n";
  }
  constexpr std::size_t kShown = 50;
  out +=
      "<details><summary>Charges</summary>\n<table>\n<tr><th>#</th><th>label</th>"
      "<th>count</th><th>event</th><th>epsilon after</th></tr>\n";
  for (std::size_t i = 0; i < charges.size() && i < kShown; ++i) {
    const Json& c = charges[i];
    out += fmt::format(
        "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td><code>{}</code>"
        "</td><td class=\"num\">{}</td></tr>\n",
        i + 1, esc(str_of(c, "label")), fig(num_of(c, "count"), 12),
        esc(c.contains("event") ? c["event"].dump() : ""), fig(num_of(c, "epsilon_after"), 6));
  }
  out += "</table>\n";
  if (charges.size() > kShown)
    out += fmt::format("<p class=\"note\">... and {} more charges.</p>\n", charges.size() - kShown);
  return out + "</details>\n";
}

std::string privacy_section(const Json& summary, const fs::path& dir,
                            const std::optional<MetricsTable>& metrics, int& counter) {
  const Json& p = summary["privacy"];
  std::string out;
  if (p.is_null()) {
    out =
        "<section class=\"not-private\" id=\"privacy\">\n<h2>Privacy</h2>\n"
        "<p id=\"privacy-none\"><b>This run is not private.</b> summary.json records no privacy "
        "guarantee (\"privacy\": null): nothing protects the individuals in the data it learned "
        "from, and its policy, curves and figures may reveal any of them.</p>\n";
  } else {
    const std::string unit = str_of(p, "unit");
    const std::string neighbouring = str_of(p, "neighbouring");
    const bool formal = p.contains("formal") && p["formal"].is_boolean() && p["formal"].get<bool>();
    const bool reproducible = p.contains("reproducible_noise") &&
                              p["reproducible_noise"].is_boolean() &&
                              p["reproducible_noise"].get<bool>();
    const Json details =
        p.contains("details") && p["details"].is_object() ? p["details"] : Json::object();
    const double eps = num_of(p, "epsilon");
    const double delta = num_of(p, "delta");
    std::string why = str_of(details, "why_not_formal");
    if (why.empty() && reproducible)
      why = "the noise is seeded: whoever holds the seed can regenerate and subtract it";
    if (why.empty()) why = "some published outputs are not covered; see below";
    // green for a formal record, amber for one whose guarantee is stated but not formal
    out = fmt::format("<section class=\"private{}\" id=\"privacy\">\n<h2>Privacy</h2>\n",
                      formal ? "" : " not-formal");
    out += fmt::format(
        "<p>This run is <b>(&#949; = <span id=\"privacy-epsilon\" data-value=\"{}\">{}</span>, "
        "&#948; = <span id=\"privacy-delta\" data-value=\"{}\">{}</span>)-differentially "
        "private</b> for one <b>{}</b>: for any two neighbouring data sets, the probability of "
        "any outcome of the covered outputs changes by at most a factor e<sup>&#949;</sup>, "
        "plus &#948;. {}</p>\n",
        esc(p["epsilon"].dump()), esc(fig(eps)), esc(p["delta"].dump()), esc(fig(delta, 3)),
        esc(unit.empty() ? "unit" : unit),
        formal ? "<b>Formal:</b> yes."
               : "<b>Formal: no</b>, so read the figures as what the record below says they "
                 "are, not as a guarantee about everything the run published.");
    out += "<dl class=\"words\">\n";
    out += fmt::format("<dt>What is protected</dt><dd>one {}; {}.</dd>\n",
                       esc(unit.empty() ? "unit" : unit), relation_words(neighbouring, unit));
    out += fmt::format("<dt>Epsilon and delta</dt><dd>&#949; = {}, &#948; = {}{}</dd>\n",
                       esc(fig(eps, 6)), esc(fig(delta, 3)),
                       std::isfinite(num_of(p, "sampler_delta"))
                           ? fmt::format(" (of which {} is owed to the Gaussian sampler's "
                                         "distance from the exact discrete Gaussian)",
                                         esc(fig(num_of(p, "sampler_delta"), 3)))
                           : std::string());
    out +=
        fmt::format("<dt>Accountant</dt><dd>{}</dd>\n", accountant_words(str_of(p, "accountant")));
    if (const std::string s = str_of(p, "sensitivity"); !s.empty())
      out += fmt::format("<dt>Sensitivity</dt><dd>{}</dd>\n", esc(s));
    if (const std::string m = str_of(details, "mechanism"); !m.empty())
      out += fmt::format("<dt>Mechanism</dt><dd>{}</dd>\n", esc(m));
    out += fmt::format("<dt>Noise source</dt><dd>{}.</dd>\n",
                       noise_words(str_of(p, "noise_source"), reproducible));
    out += fmt::format(
        "<dt>Formal</dt><dd id=\"privacy-formal\">{}</dd>\n",
        formal ? "yes: every output the run publishes is post-processing of the accounted "
                 "releases under the stated relation, with noise nobody else can regenerate."
               : "no: " + esc(why) + ".");
    out += "</dl>\n<h3>What the record covers</h3>\n" + list_items(strings_of(p, "covers"));
    std::vector<std::string> not_covered = strings_of(p, "not_covered");
    for (auto& s : strings_of(details, "not_covered")) not_covered.push_back(std::move(s));
    out += "<h3>What it does not cover</h3>\n" + list_items(not_covered);
    std::vector<std::pair<std::string, std::string>> rows;
    flatten(p, "", rows);
    out += "<details><summary>Every field of the record (summary.json \"privacy\")</summary>\n" +
           kv_table(rows) + "</details>\n";
  }
  // epsilon over training: metrics.csv's epsilon column
  if (metrics && metrics->find("epsilon")) {
    const std::string x = metrics->default_x();
    if (metrics->find(x) && has_finite(metrics->column("epsilon", "epsilon"))) {
      PlotSpec spec;
      spec.title = "epsilon spent over training (metrics.csv)";
      spec.x_label = x;
      spec.y_label = "epsilon";
      spec.width = 520;
      spec.height = 300;
      spec.series.push_back(
          line_series("epsilon", metrics->column(x, "x"), metrics->column("epsilon", "epsilon")));
      out += "<h3>Epsilon over training</h3>\n<div class=\"plots\">" + plot_or_note(spec, counter) +
             "</div>\n";
    }
  }
  out += ledger_block(dir, counter);
  if (summary.contains("audit") && summary["audit"].is_object())
    out += audit_block(summary["audit"]);
  return out + "</section>\n";
}

std::string curves_section(const std::optional<MetricsTable>& metrics, const std::string& problem,
                           int& counter) {
  std::string out = "<section id=\"curves\">\n<h2>Learning curves</h2>\n";
  if (!metrics) return out + "<p class=\"note\">" + esc(problem) + "</p>\n</section>\n";
  const MetricsTable& t = *metrics;
  const std::string x = t.default_x();
  if (!t.find(x))
    return out + fmt::format(
                     "<p class=\"note\">metrics.csv has no {} column to plot against.</p>\n"
                     "</section>\n",
                     esc(x));
  const auto& xs = t.column(x, "x");
  out += "<div class=\"plots\">\n";
  const std::string ret = return_column(t);
  std::vector<std::string> skip = {x,         "step",       "env_steps",  "episode",   "episodes",
                                   "epsilon", "return_std", "return_min", "return_max"};
  if (!ret.empty()) {
    skip.push_back(ret);
    PlotSpec spec;
    spec.title = "evaluation return (+- sd over episodes)";
    spec.x_label = x;
    spec.y_label = ret;
    spec.width = 520;
    spec.height = 320;
    PlotSeries s = line_series(ret, xs, t.column(ret, "y"));
    if (ret == "return_mean" && t.find("return_std")) {
      // the band: mean +- the standard deviation over the evaluation episodes
      Band b;
      const auto& m = t.column(ret, "y");
      const auto& sd = t.column("return_std", "y");
      for (std::size_t i = 0; i < xs.size(); ++i) {
        if (!std::isfinite(xs[i]) || !std::isfinite(m[i])) continue;
        b.x.push_back(xs[i]);
        b.mean.push_back(m[i]);
        b.lower.push_back(m[i] - sd[i]);
        b.upper.push_back(m[i] + sd[i]);
        b.n.push_back(1);
      }
      s = PlotSeries{"mean +- sd", std::move(b)};
    }
    spec.series.push_back(std::move(s));
    out += plot_or_note(spec, counter) + "\n";
  }
  int shown = 0;
  for (const auto& c : t.columns) {
    if (std::find(skip.begin(), skip.end(), c) != skip.end()) continue;
    if (!has_finite(t.column(c, "y")) || ++shown > 12) continue;
    PlotSpec spec;
    spec.title = c;
    spec.x_label = x;
    spec.y_label = c;
    spec.width = 520;
    spec.height = 320;
    spec.series.push_back(line_series(c, xs, t.column(c, "y")));
    out += plot_or_note(spec, counter) + "\n";
  }
  out += "</div>\n";
  if (shown > 12)
    out += fmt::format("<p class=\"note\">{} more columns of metrics.csv are not drawn.</p>\n",
                       shown - 12);
  return out + "</section>\n";
}

std::string timing_section(const fs::path& dir, bool is_private) {
  std::string out = "<section id=\"timing\">\n<h2>Timing</h2>\n";
  const JsonFile f = read_json_optional(dir / "timing.json");
  if (!f.present) return out + "<p class=\"note\">No timing.json.</p>\n</section>\n";
  if (!f.value)
    return out + fmt::format("<p class=\"bad\">timing.json could not be read: {}</p>\n</section>\n",
                             esc(f.problem));
  std::vector<std::pair<std::string, std::string>> rows;
  flatten(*f.value, "", rows);
  out += kv_table(rows);
  out +=
      "<p class=\"note\">Wall-clock figures (seconds) of this machine: the only part of a run "
      "directory that varies between reruns.";
  if (is_private)
    out +=
        " They are not covered by the privacy guarantee: they depend on the data (a timing "
        "side channel).";
  return out + "</p>\n</section>\n";
}

// the saved policy's episode as a player, or why there is none
std::string animation_block(const fs::path& dir, const fs::path& page) {
  std::string why;
  try {
    const fs::path config_path = dir / "config.yaml";
    if (const std::string p = file_problem(config_path); !p.empty())
      throw DataError(fmt::format("config.yaml {}", p));
    const Node config = load_yaml_file(config_path);
    const Node* env_node = config.is_map() ? config.find("env") : nullptr;
    const Node* id_node = env_node && env_node->is_map() ? env_node->find("id") : nullptr;
    if (id_node == nullptr) throw DataError("config.yaml names no env (env.id)");
    const std::string env_id = id_node->as_string("env.id");
    const Node* params_node = env_node->find("params");
    const ParamMap params = params_node && !params_node->is_null()
                                ? params_node->to_param_map("env.params")
                                : ParamMap{};
    fs::path policy_path;
    for (const char* name : {"policy.json", "policy.bin"})
      if (file_problem(dir / name).empty()) {
        policy_path = dir / name;
        break;
      }
    if (policy_path.empty())
      throw DataError("the run directory holds no saved policy (policy.json or policy.bin)");
    auto env = envs::make_env(env_id, params);
    auto policy = algos::make_policy(policy_path.string(), *env);
    const std::int64_t limit = env->spec().max_episode_steps;
    const std::int64_t max_steps = limit > 0 ? std::min(limit, kReportMaxSteps) : kReportMaxSteps;
    std::size_t n = 0;
    const std::string svg =
        cli::episode_frames_svg(*env, *policy, 1, kReportEpisodeSeed, max_steps,
                                fmt::format("{} on {}, seed {}", policy_path.filename().string(),
                                            env_id, kReportEpisodeSeed),
                                &n);
    const double fps = std::clamp(static_cast<double>(n) / 4.0, 2.0, 30.0);
    std::string command = "dprl render --env " + env_id;
    if (params_node && params_node->is_map())
      for (const auto& [k, v] : params_node->items()) command += " --param " + k + "=" + v.text();
    command += fmt::format(" --policy {} --seed {} --max-steps {}",
                           relative_to_page(policy_path, page).generic_string(), kReportEpisodeSeed,
                           max_steps);
    return fmt::format(
        "<div class=\"player\" id=\"policy-player\" data-fps=\"{0:g}\" data-frames=\"{1}\" "
        "data-frame=\"0\">\n{2}<div class=\"controls\"><button type=\"button\">Play</button>"
        "<input type=\"range\" min=\"0\" max=\"{3}\" value=\"0\" step=\"1\" "
        "aria-label=\"frame\"/><span class=\"frame-label\">frame 1 / {1}</span></div>\n"
        "<p class=\"note\">The saved policy ({4}) for one episode of {5} with seed {6}{7}, "
        "{1} frames at {0:g} per second. The same frames: <code>{8}</code></p>\n</div>\n",
        fps, n, svg, n - 1, esc(policy_path.filename().string()), esc(env_id), kReportEpisodeSeed,
        max_steps < limit || limit <= 0 ? fmt::format(" (the first {} steps)", max_steps) : "",
        esc(command));
  } catch (const std::exception& e) {
    why = e.what();
  }
  return fmt::format(
      "<div class=\"player-missing\" id=\"policy-player-missing\"><p class=\"bad\">No animation "
      "of the policy: {}</p></div>\n",
      esc(why));
}

std::string figures_table(const Json& s) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const char* k : {"name", "env", "algo", "seed", "env_steps", "episodes"})
    if (s.contains(k)) rows.emplace_back(k, json_text(s[k]));
  if (s.contains("final_eval") && s["final_eval"].is_object()) {
    const Json& e = s["final_eval"];
    rows.emplace_back("final evaluation return",
                      fmt::format("{} +- {} over {} episodes", fig(num_of(e, "return_mean")),
                                  fig(num_of(e, "return_std"), 3), fig(num_of(e, "episodes"), 9)));
    if (std::isfinite(num_of(e, "return_min")))
      rows.emplace_back("return min / max", fmt::format("{} / {}", fig(num_of(e, "return_min")),
                                                        fig(num_of(e, "return_max"))));
    if (std::isfinite(num_of(e, "length_mean")))
      rows.emplace_back("mean episode length", fig(num_of(e, "length_mean")));
  }
  const Json& p = s["privacy"];
  rows.emplace_back(
      "privacy", p.is_null() ? "not private"
                             : fmt::format("({}, {})-DP, one {}", fig(num_of(p, "epsilon")),
                                           fig(num_of(p, "delta"), 3), str_of(p, "unit", "unit")));
  if (s.contains("extra") && s["extra"].is_object())
    for (const auto& [k, v] : s["extra"].items()) rows.emplace_back(k, json_text(v));
  if (s.contains("versions") && s["versions"].is_object())
    for (const auto& [k, v] : s["versions"].items()) rows.emplace_back(k, json_text(v));
  return kv_table(rows);
}

std::string files_section(const fs::path& dir, const fs::path& page) {
  std::vector<std::pair<std::string, std::uintmax_t>> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::error_code ec2;
    if (!e.is_regular_file(ec2)) continue;
    const std::string name = e.path().filename().string();
    if (name.find(".tmp.") != std::string::npos || name.ends_with(".lock")) continue;
    files.emplace_back(name, e.file_size(ec2));
  }
  std::sort(files.begin(), files.end());
  std::string out = "<section id=\"files\">\n<h2>Files</h2>\n<table>\n";
  for (const auto& [name, size] : files)
    out += fmt::format("<tr><td><a href=\"{}\">{}</a></td><td class=\"num\">{} bytes</td></tr>\n",
                       esc(href(relative_to_page(dir / name, page))), esc(name), size);
  return out + "</table>\n</section>\n";
}

RunPage build_run_page(const fs::path& dir, const fs::path& page) {
  RunPage r;
  const Json s = read_summary(dir);
  std::string metrics_problem;
  const fs::path metrics_path = dir / "metrics.csv";
  if (const std::string p = file_problem(metrics_path); !p.empty()) {
    metrics_problem = "metrics.csv " + p + ": no curves.";
  } else {
    try {
      r.metrics = read_metrics_csv(metrics_path);
    } catch (const Error& e) {
      metrics_problem = std::string("metrics.csv could not be read: ") + e.what();
    }
  }
  int counter = 0;
  const std::string name =
      str_of(s, "name", fs::absolute(dir).lexically_normal().filename().string());
  std::string body =
      "<section id=\"overview\">\n<h2>The run and its policy</h2>\n<div class=\"hero\">\n";
  body += animation_block(dir, page);
  body += "<div class=\"figures\">\n" + figures_table(s) + "</div>\n</div>\n</section>\n";
  body += privacy_section(s, dir, r.metrics, counter);
  body += curves_section(r.metrics, metrics_problem, counter);
  body += timing_section(dir, !s["privacy"].is_null());
  std::string config = "(no config.yaml)";
  if (const std::string p = file_problem(dir / "config.yaml"); p.empty()) {
    try {
      config = read_file(dir / "config.yaml");
    } catch (const Error& e) {
      config = e.what();
    }
  }
  body += "<section id=\"config\">\n<h2>Resolved config (config.yaml)</h2>\n<pre>" + esc(config) +
          "</pre>\n</section>\n";
  body += files_section(dir, page);
  const std::string subtitle =
      esc(fmt::format("{} on {}, seed {} ({})", str_of(s, "algo", "?"), str_of(s, "env", "?"),
                      s.contains("seed") ? json_text(s["seed"]) : "?", dir.string()));
  r.html = document("dprl run " + name, subtitle, body);
  return r;
}

// ---- the sweep page -------------------------------------------------------------------------

// RFC 4180 CSV (as sweep.csv is written): rows of cells; DataError "<source>:<line>: ..." on an
// unterminated quote.
std::vector<std::vector<std::string>> parse_csv(std::string_view text, const std::string& source) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false, any = false;
  std::size_t line = 1, quote_line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        cell += c;
      }
    } else if (c == '"') {
      quoted = any = true;
      quote_line = line;
    } else if (c == ',') {
      row.push_back(std::move(cell));
      cell.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !cell.empty()) {
        row.push_back(std::move(cell));
        rows.push_back(std::move(row));
      }
      row.clear();
      cell.clear();
      any = false;
      ++line;
    } else {
      cell += c;
      any = true;
    }
  }
  if (quoted) throw DataError(fmt::format("{}:{}: unterminated quoted cell", source, quote_line));
  if (any || !cell.empty()) {
    row.push_back(std::move(cell));
    rows.push_back(std::move(row));
  }
  return rows;
}

double cell_number(const std::string& s) {
  if (s.empty()) return NAN;
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    return used == s.size() ? v : NAN;
  } catch (const std::exception&) {
    return NAN;
  }
}

struct SweepRunRow {
  std::vector<std::string> cells;
  std::string label;
  std::string seed;
  fs::path dir;
  fs::path page;       // its report.html ("" when none was written)
  std::string status;  // "" when the page was written, else why not
  std::optional<MetricsTable> metrics;
};

std::string mean_sd_text(const std::vector<double>& xs, int digits = 4) {
  if (xs.empty()) return "-";
  const auto [m, sd] = algos::mean_sd(xs);
  return fmt::format("{} +- {}", fig(m, digits), fig(sd, 3));
}

ReportResult write_sweep(const fs::path& dir, const fs::path& out) {
  const fs::path csv_path = dir / "sweep.csv";
  if (const std::string p = file_problem(csv_path); !p.empty())
    throw DataError(fmt::format("{}: {}", csv_path.string(), p));
  const auto rows = parse_csv(read_file(csv_path), csv_path.string());
  if (rows.empty()) throw DataError(fmt::format("{}: empty", csv_path.string()));
  const auto& header = rows.front();
  auto col = [&](std::string_view name) -> std::optional<std::size_t> {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) return std::nullopt;
    return static_cast<std::size_t>(it - header.begin());
  };
  const auto label_col = col("label"), seed_col = col("seed");
  if (!label_col || !seed_col || *seed_col < *label_col)
    throw DataError(
        fmt::format("{}: no label and seed columns (not a dprl sweep table)", csv_path.string()));
  const auto ret_col = col("return_mean"), eps_col = col("epsilon"), dir_col = col("dir");
  const auto steps_col = col("env_steps"), sd_col = col("return_std");
  std::vector<std::string> keys(header.begin() + static_cast<long>(*label_col) + 1,
                                header.begin() + static_cast<long>(*seed_col));

  std::vector<SweepRunRow> runs;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    if (rows[r].size() != header.size())
      throw DataError(fmt::format("{}: row {} has {} cells; the header has {}", csv_path.string(),
                                  r + 1, rows[r].size(), header.size()));
    SweepRunRow run;
    run.cells = rows[r];
    run.label = run.cells[*label_col];
    run.seed = run.cells[*seed_col];
    run.dir = dir / run.label / ("seed" + run.seed);
    std::error_code ec;
    if (!fs::is_directory(run.dir, ec) && dir_col && !run.cells[*dir_col].empty() &&
        fs::is_directory(run.cells[*dir_col], ec))
      run.dir = run.cells[*dir_col];
    runs.push_back(std::move(run));
  }

  // every run's own page
  ReportResult result{out, true, 0};
  for (auto& run : runs) {
    std::error_code ec;
    if (!fs::is_regular_file(run.dir / "summary.json", ec)) {
      run.status = "no summary.json (failed or not run)";
      continue;
    }
    try {
      const fs::path page = run.dir / "report.html";
      RunPage p = build_run_page(run.dir, page);
      write_file_atomic(page, p.html);
      run.page = page;
      run.metrics = std::move(p.metrics);
      ++result.run_pages;
    } catch (const Error& e) {
      run.status = e.what();
    }
  }

  // configurations in first-seen order
  std::vector<std::string> labels;
  for (const auto& run : runs)
    if (std::find(labels.begin(), labels.end(), run.label) == labels.end())
      labels.push_back(run.label);

  int counter = 0;
  std::string body =
      "<section id=\"configurations\">\n<h2>Configurations</h2>\n<table>\n<tr>"
      "<th>configuration</th>";
  for (const auto& k : keys) body += "<th>" + esc(k) + "</th>";
  body +=
      "<th>runs</th><th>final return (mean +- sd over seeds)</th><th>epsilon</th>"
      "<th>run pages</th></tr>\n";
  std::string best;
  double best_mean = -INFINITY;
  for (const auto& label : labels) {
    std::vector<double> rets, epss;
    std::size_t planned = 0, done = 0;
    std::string links, values;
    for (const auto& run : runs) {
      if (run.label != label) continue;
      if (values.empty())
        for (std::size_t k = 0; k < keys.size(); ++k)
          values += "<td>" + esc(run.cells[*label_col + 1 + k]) + "</td>";
      ++planned;
      if (ret_col && std::isfinite(cell_number(run.cells[*ret_col]))) {
        rets.push_back(cell_number(run.cells[*ret_col]));
        ++done;
      }
      if (eps_col && !std::isnan(cell_number(run.cells[*eps_col])))
        epss.push_back(cell_number(run.cells[*eps_col]));
      links += run.page.empty()
                   ? fmt::format(" <span class=\"bad\" title=\"{}\">seed {}</span>",
                                 esc(run.status), esc(run.seed))
                   : fmt::format(" <a href=\"{}\">seed&#160;{}</a>",
                                 esc(href(relative_to_page(run.page, out))), esc(run.seed));
    }
    if (!rets.empty()) {
      double m = 0;
      for (double x : rets) m += x;
      m /= static_cast<double>(rets.size());
      if (m > best_mean) {
        best_mean = m;
        best = label;
      }
    }
    std::string eps_text = "not private";
    if (!epss.empty()) {
      const auto [lo, hi] = std::minmax_element(epss.begin(), epss.end());
      eps_text = *lo == *hi ? fig(*lo) : fmt::format("{} to {}", fig(*lo), fig(*hi));
    }
    body += fmt::format(
        "<tr><td>{}</td>{}<td class=\"num\">{} of {}</td><td class=\"num\">{}</td><td>{}</td>"
        "<td>{}</td></tr>\n",
        esc(label), values, done, planned, mean_sd_text(rets), esc(eps_text), links);
  }
  body += "</table>\n";
  if (!best.empty())
    body += fmt::format("<p>Best by mean final evaluation return: <b>{}</b> ({}).</p>\n", esc(best),
                        fig(best_mean));
  body += "</section>\n";

  // curves with seed bands: the return column, and epsilon when some run has one
  body +=
      "<section id=\"curves\">\n<h2>Learning curves (mean and 95% band across seeds)</h2>\n"
      "<div class=\"plots\">\n";
  for (const std::string_view which : {"return", "epsilon"}) {
    PlotSpec spec;
    spec.title = which == "return" ? "evaluation return" : "epsilon spent over training";
    spec.width = 600;
    spec.height = 360;
    for (const auto& label : labels) {
      std::vector<Curve> curves;
      std::string x;
      for (const auto& run : runs) {
        if (run.label != label || !run.metrics) continue;
        const MetricsTable& t = *run.metrics;
        const std::string y = which == "return" ? return_column(t) : std::string("epsilon");
        const std::string xc = t.default_x();
        if (y.empty() || !t.find(y) || !t.find(xc)) continue;
        curves.push_back({t.column(xc, "x"), t.column(y, "y")});
        x = xc;
        spec.y_label = y;
      }
      if (curves.empty()) continue;
      spec.x_label = x;
      Band band = seed_band(curves);
      if (band.x.empty()) continue;
      spec.series.push_back({fmt::format("{} (n={})", label, curves.size()), std::move(band)});
    }
    if (!spec.series.empty()) body += plot_or_note(spec, counter) + "\n";
  }
  body += "</div>\n</section>\n";

  // every run
  body +=
      "<section id=\"runs\">\n<h2>Runs</h2>\n<table>\n<tr><th>#</th><th>configuration</th>"
      "<th>seed</th><th>env steps</th><th>final return</th><th>epsilon</th><th>page</th></tr>\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& run = runs[i];
    auto cell = [&](const std::optional<std::size_t>& c) {
      return c ? esc(run.cells[*c]) : std::string();
    };
    const std::string ret =
        ret_col && !run.cells[*ret_col].empty()
            ? fig(cell_number(run.cells[*ret_col])) +
                  (sd_col ? " +- " + fig(cell_number(run.cells[*sd_col]), 3) : std::string())
            : std::string();
    body += fmt::format(
        "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}"
        "</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
        i, esc(run.label), esc(run.seed), cell(steps_col), esc(ret),
        eps_col && !run.cells[*eps_col].empty() ? esc(fig(cell_number(run.cells[*eps_col])))
                                                : std::string("-"),
        run.page.empty() ? "<span class=\"bad\">" + esc(run.status) + "</span>"
                         : fmt::format("<a class=\"run-link\" href=\"{}\">report</a>",
                                       esc(href(relative_to_page(run.page, out)))));
  }
  body += "</table>\n</section>\n";
  // the config of the first run with a page (its config.yaml was readable for that page, or the
  // page says why not)
  const auto first =
      std::find_if(runs.begin(), runs.end(), [](const SweepRunRow& r) { return !r.page.empty(); });
  if (first != runs.end() && file_problem(first->dir / "config.yaml").empty())
    body += fmt::format(
        "<section id=\"config\">\n<h2>Config of the first run ({})</h2>\n<pre>{}</pre>\n"
        "</section>\n",
        esc(first->dir.string()), esc(read_file(first->dir / "config.yaml")));
  const std::string name = fs::absolute(dir).lexically_normal().filename().string();
  std::size_t done = 0;
  for (const auto& run : runs) done += run.page.empty() ? 0 : 1;
  const std::string subtitle = esc(fmt::format("{} runs, {} configurations, {} with results ({})",
                                               runs.size(), labels.size(), done, dir.string()));
  write_file_atomic(out, document("dprl sweep " + name, subtitle, body));
  return result;
}

// out's folder must exist and out must not be a folder (DataError naming out).
void check_out(const fs::path& out) {
  const fs::path folder = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw DataError(fmt::format("--out {}: {} is not a folder{}", out.string(), folder.string(),
                                fs::exists(folder, ec) ? "" : " (it does not exist)"));
  if (fs::is_directory(out, ec))
    throw DataError(fmt::format("--out {}: is a folder", out.string()));
  if (const std::string p = dir_problem(folder); !p.empty())
    throw DataError(fmt::format("--out {}: {}", out.string(), p));
}

}  // namespace
}  // namespace report_page

ReportResult write_report(const std::filesystem::path& dir, const std::filesystem::path& out_arg) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir, ec))
    throw DataError(fmt::format("{}: no such run or sweep directory", dir.string()));
  if (!fs::is_directory(dir, ec))
    throw DataError(fmt::format("{}: not a folder (a run or sweep directory)", dir.string()));
  const fs::path out = out_arg.empty() ? dir / "report.html" : out_arg;
  report_page::check_out(out);
  if (fs::exists(fs::symlink_status(dir / "summary.json", ec))) {
    const report_page::RunPage page = report_page::build_run_page(dir, out);
    write_file_atomic(out, page.html);
    return {out, false, 1};
  }
  if (fs::exists(fs::symlink_status(dir / "sweep.csv", ec)))
    return report_page::write_sweep(dir, out);
  throw DataError(fmt::format(
      "{}: neither a run directory (no summary.json) nor a sweep directory (no sweep.csv)",
      dir.string()));
}

}  // namespace dprl::tools
