// Tests of `dprl report` (tools/html_report.hpp): the pages of a non-private run, a private run
// with a ledger and an audit, a run with hostile text and a sweep, checked at parse level; the
// browser check is tests/tools/report_browser_test.py.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "engine/io.hpp"
#include "tests/tools/cli_test_util.hpp"
#include "tools/html_report.hpp"

namespace fs = std::filesystem;

namespace {

// The page without the contents of its <script> and <style> elements (code, not markup).
std::string rpt_markup_of(std::string page) {
  for (const char* tag : {"script", "style"}) {
    const std::string open = std::string("<") + tag + ">", close = std::string("</") + tag + ">";
    for (auto at = page.find(open); at != std::string::npos; at = page.find(open, at + 1)) {
      const auto end = page.find(close, at);
      REQUIRE(end != std::string::npos);
      page.erase(at + open.size(), end - at - open.size());
    }
  }
  return page;
}

// Parse-level checks every page passes: balanced elements (the inline SVG included), nothing
// fetched (no external src or href, no <link>, <img>, <iframe>, <object> or <embed>), and the
// only absolute URL the SVG namespace.
void rpt_check_page(const std::string& page) {
  const std::string markup = rpt_markup_of(page);
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(test_util::well_formed(markup));
  CHECK(cli_test::count(markup, "<svg") == cli_test::count(markup, "</svg>"));
  for (const char* tag : {"<link", "<img", "<iframe", "<object", "<embed", " src="})
    CHECK_MESSAGE(markup.find(tag) == std::string::npos, tag);
  const std::regex url(R"((https?:)?//[^"' <]*)");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), url); it != std::sregex_iterator();
       ++it)
    CHECK_MESSAGE(it->str() == "http://www.w3.org/2000/svg", it->str());
}

// The attribute `attr` of the element with id `id`, and its text up to the next tag.
std::string rpt_attr_of(const std::string& page, const std::string& id, const std::string& attr) {
  const auto at = page.find("id=\"" + id + "\"");
  REQUIRE_MESSAGE(at != std::string::npos, id);
  const auto tag_end = page.find('>', at);
  const auto a = page.find(attr + "=\"", at);
  REQUIRE(a < tag_end);
  const auto v = a + attr.size() + 2;
  return page.substr(v, page.find('"', v) - v);
}
std::string rpt_text_of(const std::string& page, const std::string& id) {
  const auto at = page.find("id=\"" + id + "\"");
  REQUIRE_MESSAGE(at != std::string::npos, id);
  const auto start = page.find('>', at) + 1;
  return page.substr(start, page.find('<', start) - start);
}

std::string rpt_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const dprl::Error& e) {
    return e.what();
  }
  return "";
}

// The runs the tests share, made once per process by the dprl executable.
const fs::path& rpt_plain_run() {
  static const fs::path dir = [] {
    const auto d = cli_test::scratch("report_plain") / "run";
    const auto r =
        cli_test::run("run " + cli_test::kSrc + "/configs/quickstart.yaml --quiet --out " +
                      d.string() + " --set train.steps=20000 --set train.eval_every=5000");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    return d;
  }();
  return dir;
}

// DP actor-critic on a chain: a privacy record, privacy_ledger.json and an audit in summary.json
const fs::path& rpt_private_run() {
  static const fs::path dir = [] {
    const auto d = cli_test::scratch("report_private") / "run";
    const auto r =
        cli_test::run("run " + cli_test::kSrc +
                      "/configs/audit/actor_critic_chain.yaml --quiet --out " + d.string() +
                      " --set env.params.n=2000 --set audit.canaries=2000 --set audit.guesses=100 "
                      "--set algo.params.budget_epsilon=50");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    return d;
  }();
  return dir;
}

std::string rpt_report_of(const fs::path& dir) {
  const auto r = dprl::tools::write_report(dir);
  CHECK(r.page == dir / "report.html");
  CHECK_FALSE(r.sweep);
  return dprl::read_file(r.page);
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("report: a non-private run's page says it is not private and plays the policy") {
    const std::string page = rpt_report_of(rpt_plain_run());
    rpt_check_page(page);
    CHECK(page.find("id=\"privacy-none\"") != std::string::npos);
    CHECK(page.find("This run is not private") != std::string::npos);
    CHECK(page.find("id=\"privacy-epsilon\"") == std::string::npos);
    // the animation: one frame per step of a seeded taxi episode, the first shown
    const int frames = std::stoi(rpt_attr_of(page, "policy-player", "data-frames"));
    CHECK(frames >= 2);
    CHECK(frames <= 201);
    CHECK(cli_test::count(page, "<g display=\"none\">") == frames - 1);
    CHECK(page.find("dprl render --env taxi") != std::string::npos);
    CHECK(page.find("id=\"policy-player-missing\"") == std::string::npos);
    // curves, timing, the resolved config and the files
    CHECK(page.find("evaluation return") != std::string::npos);
    CHECK(page.find("wall_time_s") != std::string::npos);
    CHECK(page.find("learning_rate: 0.5") != std::string::npos);
    CHECK(page.find("href=\"metrics.csv\"") != std::string::npos);
    // written atomically: nothing else left beside it
    for (const auto& e : fs::directory_iterator(rpt_plain_run()))
      CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
  }

  TEST_CASE("report: a private run's page states the record in plain words, beside the audit") {
    const std::string page = rpt_report_of(rpt_private_run());
    rpt_check_page(page);
    const auto summary = test_util::load_json(rpt_private_run() / "summary.json");
    const auto& p = summary["privacy"];
    // the epsilon and delta shown are summary.json's, digit for digit in data-value
    CHECK(std::stod(rpt_attr_of(page, "privacy-epsilon", "data-value")) ==
          p["epsilon"].get<double>());
    CHECK(rpt_text_of(page, "privacy-epsilon") ==
          fmt::format("{:.4g}", p["epsilon"].get<double>()));
    CHECK(std::stod(rpt_attr_of(page, "privacy-delta", "data-value")) == p["delta"].get<double>());
    CHECK(page.find("id=\"privacy-none\"") == std::string::npos);
    // what is protected and how: unit and relation, accountant, noise, formal and why not
    CHECK(page.find("differentially private</b> for one <b>trajectory</b>") != std::string::npos);
    CHECK(page.find("replace-one") != std::string::npos);
    CHECK(page.find("privacy loss distributions") != std::string::npos);  // pld
    CHECK(page.find("seeded, so reproducible") != std::string::npos);
    const std::string formal = rpt_text_of(page, "privacy-formal");
    CHECK(formal.rfind("no: ", 0) == 0);
    CHECK(page.find("<section class=\"private not-formal\" id=\"privacy\">") != std::string::npos);
    CHECK(page.find("What it does not cover") != std::string::npos);
    CHECK(page.find("timing.json (wall and CPU seconds") != std::string::npos);
    // the ledger and the epsilon over training
    CHECK(page.find("privacy_ledger.json") != std::string::npos);
    CHECK(page.find("epsilon spent over the ledger&apos;s charges") != std::string::npos);
    CHECK(page.find("epsilon spent over training (metrics.csv)") != std::string::npos);
    // the audit's lower bound beside the claim
    CHECK(std::stod(rpt_attr_of(page, "audit-lower", "data-value")) ==
          summary["audit"]["epsilon_lower"].get<double>());
    CHECK(page.find("consistent with the claim") != std::string::npos);
    CHECK(page.find("dprl render --env chain_mdp --param n=2000") != std::string::npos);
  }

  TEST_CASE("report: the epsilon shown follows summary.json, and an audit that refutes is said") {
    const auto dir = cli_test::scratch("report_edited") / "run";
    fs::copy(rpt_private_run(), dir, fs::copy_options::recursive);
    auto summary = test_util::load_json(dir / "summary.json");
    summary["privacy"]["epsilon"] = 0.125;
    summary["audit"]["refuted"] = true;
    dprl::write_file_atomic(dir / "summary.json", summary.dump(2));
    const std::string page = rpt_report_of(dir);
    CHECK(rpt_text_of(page, "privacy-epsilon") == "0.125");
    CHECK(page.find("the audit refutes the claim") != std::string::npos);
    // a formal record gets the plain (green) section, a non-formal one the amber mark
    CHECK(page.find("<section class=\"private not-formal\"") != std::string::npos);
    summary["privacy"]["formal"] = true;
    dprl::write_file_atomic(dir / "summary.json", summary.dump(2));
    const std::string formal_page = rpt_report_of(dir);
    CHECK(formal_page.find("<section class=\"private\" id=\"privacy\">") != std::string::npos);
    CHECK(formal_page.find("class=\"private not-formal\"") == std::string::npos);
    summary["privacy"]["epsilon"] = "inf";
    dprl::write_file_atomic(dir / "summary.json", summary.dump(2));
    CHECK(rpt_text_of(rpt_report_of(dir), "privacy-epsilon") == "infinite");
  }

  TEST_CASE("report: hostile text from the files is escaped, and a missing policy is said") {
    const auto dir = cli_test::scratch("report_hostile") / "run";
    fs::copy(rpt_plain_run(), dir, fs::copy_options::recursive);
    const std::string evil = "<script>alert(\"x\")</script> & 'q' <b>";
    auto summary = test_util::load_json(dir / "summary.json");
    summary["name"] = evil;
    summary["extra"]["<img onerror=alert(1)>"] = 1.5;
    dprl::write_file_atomic(dir / "summary.json", summary.dump(2));
    dprl::write_file_atomic(dir / "config.yaml",
                            dprl::read_file(dir / "config.yaml") + "# " + evil + "\n");
    fs::remove(dir / "policy.json");
    dprl::write_file_atomic(dir / "a&b <c>.txt", "x");
    const std::string page = rpt_report_of(dir);
    rpt_check_page(page);
    CHECK(page.find("<script>alert") == std::string::npos);
    CHECK(page.find("<img") == std::string::npos);
    CHECK(page.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &apos;q&apos; "
                    "&lt;b&gt;") != std::string::npos);
    CHECK(page.find("href=\"a%26b%20%3Cc%3E.txt\"") != std::string::npos);
    CHECK(page.find("id=\"policy-player-missing\"") != std::string::npos);
    CHECK(page.find("no saved policy") != std::string::npos);
    CHECK(page.find("id=\"policy-player\"") == std::string::npos);
  }

  TEST_CASE("report: a sweep's page compares its configurations and links every run's page") {
    const auto dir = cli_test::scratch("report_sweep");
    dprl::write_file_atomic(dir / "s.yaml",
                            "base: " + cli_test::kSrc +
                                "/configs/quickstart.yaml\nout: " + (dir / "sw").string() +
                                "\nseeds: [1, 2, 3]\nset:\n  train.steps: 3000\n  "
                                "train.eval_every: 1000\n  train.eval_episodes: 5\ngrid:\n  "
                                "algo.params.learning_rate: [0.1, 0.5]\n");
    const auto r = cli_test::run("sweep " + (dir / "s.yaml").string() + " --quiet --jobs 2");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    // one failed run: its directory lost its summary
    fs::remove(dir / "sw" / "learning_rate=0.5" / "seed3" / "summary.json");
    const auto out = dir / "pages" / "sweep.html";
    fs::create_directories(out.parent_path());
    const auto result = dprl::tools::write_report(dir / "sw", out);
    CHECK(result.sweep);
    CHECK(result.run_pages == 5);
    const std::string page = dprl::read_file(out);
    rpt_check_page(page);
    CHECK(cli_test::count(page, "class=\"run-link\"") == 5);
    for (const char* lr : {"0.1", "0.5"})
      for (int seed = 1; seed <= 3; ++seed) {
        const std::string rel =
            fmt::format("../sw/learning_rate%3D{}/seed{}/report.html", lr, seed);
        const bool failed = std::string(lr) == "0.5" && seed == 3;
        CHECK_MESSAGE((page.find("href=\"" + rel + "\"") != std::string::npos) == !failed, rel);
        CHECK(fs::exists(dir / "sw" / fmt::format("learning_rate={}", lr) /
                         fmt::format("seed{}", seed) / "report.html") == !failed);
      }
    CHECK(page.find("no summary.json (failed or not run)") != std::string::npos);
    // the table (sweep.csv's figures) and the curves with seed bands (the run directories')
    CHECK(page.find("<td>learning_rate=0.1</td><td>0.1</td><td class=\"num\">3 of 3</td>") !=
          std::string::npos);
    CHECK(page.find("<td>learning_rate=0.5</td><td>0.5</td><td class=\"num\">3 of 3</td>") !=
          std::string::npos);
    CHECK(page.find("learning_rate=0.1 (n=3)") != std::string::npos);
    CHECK(page.find("learning_rate=0.5 (n=2)") != std::string::npos);
    CHECK(page.find("Best by mean final evaluation return") != std::string::npos);
    // a run page of the sweep is a full page of its own
    rpt_check_page(dprl::read_file(dir / "sw" / "learning_rate=0.1" / "seed2" / "report.html"));
  }

  TEST_CASE("report: bad directories and outputs are one-line errors naming the path") {
    const auto dir = cli_test::scratch("report_bad");
    CHECK(rpt_error_of([&] { dprl::tools::write_report(dir / "nope"); }).find("nope") !=
          std::string::npos);
    fs::create_directories(dir / "empty");
    CHECK(rpt_error_of([&] {
            dprl::tools::write_report(dir / "empty");
          }).find("neither a run directory") != std::string::npos);
    fs::create_directories(dir / "bad");
    dprl::write_file_atomic(dir / "bad" / "summary.json", "{\"privacy\": ");
    CHECK(rpt_error_of([&] {
            dprl::tools::write_report(dir / "bad");
          }).find("summary.json: not valid JSON") != std::string::npos);
    dprl::write_file_atomic(dir / "bad" / "summary.json", "{\"privacy\": {\"epsilon\": \"x\"}}");
    CHECK(rpt_error_of([&] { dprl::tools::write_report(dir / "bad"); }).find("privacy.epsilon") !=
          std::string::npos);
    CHECK(rpt_error_of([&] {
            dprl::tools::write_report(rpt_plain_run(), dir / "no" / "r.html");
          }).find("no/r.html") != std::string::npos);
    CHECK(rpt_error_of([&] {
            dprl::tools::write_report(rpt_plain_run(), dir);
          }).find("is a folder") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "bad" / "report.html"));
  }
}
