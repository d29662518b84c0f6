// End-to-end tests of `dprl render`: the animated SVG it writes and its one-line refusals.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/io.hpp"
#include "tests/tools/cli_test_util.hpp"

namespace fs = std::filesystem;

TEST_SUITE("e2e") {
  TEST_CASE("render: cartpole with the random policy writes one animated SVG frame per step") {
    const auto dir = cli_test::scratch("render_cartpole");
    const auto out = dir / "c.svg";
    const auto r = cli_test::run(
        "render --env cartpole --policy random --seed 1 --episodes 2 "
        "--max-steps 10 --out " +
        out.string());
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const std::string svg = dprl::read_file(out);
    CHECK(test_util::well_formed(svg));
    // two episodes of at most 10 steps: at most 22 frames; eval's episodes for seed 1
    const int frames = cli_test::count(svg, "<g");
    CHECK(frames >= 4);
    CHECK(frames <= 22);
    CHECK(cli_test::count(svg, "<animate ") == frames);
    CHECK(cli_test::count(svg, "<g>") == 1);  // only the first frame shows without animation
    CHECK(cli_test::count(svg, "step 0  return 0") == 2);  // each episode's reset state
    CHECK(svg.find("episode 2/2") != std::string::npos);
    CHECK(r.out.find(std::to_string(frames) + " frames") != std::string::npos);
    // no temporary left beside the output
    int files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
    CHECK(files == 1);
  }

  TEST_CASE("eval --render draws the evaluated episodes whole and leaves the figures as they are") {
    const auto dir = cli_test::scratch("eval_render");
    const auto out = dir / "e.svg";
    const std::string eval = "eval --env cartpole --policy random --seed 1 --episodes 3 --json";
    const auto plain = cli_test::run(eval);
    REQUIRE(plain.code == 0);
    const auto r = cli_test::run(eval + " --render " + out.string());
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(r.out == plain.out);  // the same JSON, and nothing else on stdout
    const auto j = nlohmann::json::parse(r.out);
    const std::string svg = dprl::read_file(out);
    CHECK(test_util::well_formed(svg));
    // every step of the three episodes, plus their reset states
    const double steps = j["length_mean"].get<double>() * 3;
    CHECK(cli_test::count(svg, "<g") == static_cast<int>(std::lround(steps)) + 3);
    CHECK(cli_test::count(svg, "episode 3/3") >= 1);
    // refused before anything runs: over the frame cap (100 x 501), a bad --fps
    for (const std::string& bad :
         {"eval --env cartpole --policy random --episodes 100 --render " + (dir / "b.svg").string(),
          "eval --env cartpole --policy random --episodes 1 --fps 0 --render " +
              (dir / "b.svg").string()}) {
      CAPTURE(bad);
      const auto e = cli_test::run(bad);
      CHECK(e.code == 2);
      CHECK(cli_test::one_line(e.err));
      CHECK(e.out.empty());
      CHECK_FALSE(fs::exists(dir / "b.svg"));
    }
  }

  TEST_CASE("render: a full seeded episode has as many frames as dprl eval's episode length") {
    const auto dir = cli_test::scratch("render_length");
    const auto out = dir / "t.svg";
    const auto ev =
        cli_test::run("eval --env Taxi-v3 --policy random --seed 4 --episodes 1 --json");
    REQUIRE(ev.code == 0);
    const auto pos = ev.out.find("\"length_mean\":");
    REQUIRE(pos != std::string::npos);
    const int length = std::stoi(ev.out.substr(pos + 14));
    const auto r =
        cli_test::run("render --env Taxi-v3 --policy random --seed 4 --out " + out.string());
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const std::string svg = dprl::read_file(out);
    CHECK(cli_test::count(svg, "<g") == length + 1);
    CHECK(test_util::well_formed(svg));
  }

  TEST_CASE("render: bad inputs give one line, exit 2 and no file") {
    const auto dir = cli_test::scratch("render_bad");
    const std::string out = (dir / "x.svg").string();
    struct Case {
      std::string args;
      std::string names;
    };
    const Case cases[] = {
        {"--env no_such_env --policy random --out " + out, "no_such_env"},
                {"--env cartpole --policy random --episodes 0 --out " + out, "--episodes"},
        {"--env cartpole --policy random --max-steps 100000000 --out " + out, "--max-steps"},
        {"--env cartpole --policy random --episodes 100 --out " + out, "--episodes"},
        {"--env cartpole --policy random --out " + (dir / "missing" / "x.svg").string(), "--out"},
        {"--env cartpole --policy random --out " + dir.string(), "--out"},
        {"--env cartpole --policy no_such_policy --out " + out, "no_such_policy"},
        {"--env cartpole --policy random --param length=-1 --out " + out, "length"},
        {"--env cartpole --policy random --fps 0 --out " + out, "--fps"},
    };
    for (const auto& c : cases) {
      CAPTURE(c.args);
      const auto r = cli_test::run("render " + c.args);
      CHECK(r.code == 2);
      CHECK(cli_test::one_line(r.err));
      CHECK(r.err.find(c.names) != std::string::npos);
      CHECK(r.out.empty());
      int files = 0;
      for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
      CHECK(files == 0);
    }
  }

  TEST_CASE("render: --out F.png writes one PNG per frame, --out F.gif one looping GIF") {
    const auto dir = cli_test::scratch("render_raster");
    const std::string args = "render --env cartpole --policy random --seed 1 --max-steps 6 --out ";
    const auto svg = cli_test::run(args + (dir / "c.svg").string());
    REQUIRE(svg.code == 0);
    const int frames = cli_test::count(dprl::read_file(dir / "c.svg"), "<g");
    REQUIRE(frames >= 2);
#ifdef DPRL_TEST_RASTER
    const auto png = cli_test::run(args + (dir / "c.png").string());
    REQUIRE_MESSAGE(png.code == 0, png.err);
    CHECK(png.out.find(fmt::format("c_{:05d}.png ({} frames", frames - 1, frames)) !=
          std::string::npos);
    CHECK_FALSE(fs::exists(dir / "c.png"));
    std::string previous;
    for (int i = 0; i < frames; ++i) {
      const auto f = dir / fmt::format("c_{:05d}.png", i);
      REQUIRE(fs::exists(f));
      const std::string bytes = dprl::read_file(f);
      CHECK(bytes.rfind("\x89PNG\r\n\x1a\n", 0) == 0);
      // IHDR: 600 px wide, as the SVG
      CHECK(bytes.substr(16, 4) == std::string("\0\0\x02\x58", 4));
      CHECK(bytes != previous);  // the cart moves from frame to frame
      previous = bytes;
    }
    CHECK_FALSE(fs::exists(dir / fmt::format("c_{:05d}.png", frames)));
    const auto gif = cli_test::run(args + (dir / "c.gif").string() + " --fps 20");
    REQUIRE_MESSAGE(gif.code == 0, gif.err);
    const std::string g = dprl::read_file(dir / "c.gif");
    CHECK(g.rfind("GIF89a", 0) == 0);
    CHECK(g.substr(6, 2) == std::string("\x58\x02", 2));  // 600 px wide, little-endian
    CHECK(g.find("NETSCAPE2.0") != std::string::npos);      // loops
    // one graphic control block per frame, each 5 hundredths of a second (20 fps)
    CHECK(cli_test::count(g, std::string("\x21\xf9\x04\x00\x05\x00", 6)) +
              cli_test::count(g, std::string("\x21\xf9\x04\x04\x05\x00", 6)) ==
          frames);
    CHECK(g.back() == ';');
    int files = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
      CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
      ++files;
    }
    CHECK(files == frames + 2);  // c.svg, the PNG frames and c.gif
#else
    for (const char* name : {"c.png", "c.gif"}) {
      const auto r = cli_test::run(args + (dir / name).string());
      CHECK(r.code == 2);
      CHECK(cli_test::one_line(r.err));
      CHECK(r.err.find("built without") != std::string::npos);
    }
    int files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
    CHECK(files == 1);
#endif
  }
}
