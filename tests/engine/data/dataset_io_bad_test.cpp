// The bad-data matrix: every malformed file is a DataError naming the file and the key, never a
// crash, and a failed write leaves nothing behind.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/data/dataset_io.hpp"
#include "engine/data/hdf5_file.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "tests/engine/data/dataset_test_util.hpp"

namespace fs = std::filesystem;
using dprl::DataError;
using dprl::test::fixture;
using dprl::test::scratch;
using json = nlohmann::ordered_json;

namespace {

// A Minari folder written by hand: Box(2, -1, 1) observations, Discrete(2) actions, `episodes`
// episodes of 3 steps (zeros, reward 1, the last step terminated), then the edits.
struct Hand {
  int episodes = 2;
  std::string drop;                 // a key not to write, e.g. "episode_1/actions"
  int extra_obs_rows = 0;           // episode 0
  std::int64_t flag = 1;            // episode 0's last termination, as int64 flags when != 1
  std::int64_t id0 = 0;             // episode 0's id attribute
  float obs_value = 0.5f;           // episode 0, row 1, component 0
  std::int64_t action = 1;          // episode 0, step 0
  std::function<void(json&)> meta;  // edits metadata.json
};

fs::path hand_minari(const std::string& name, const std::function<void(Hand&)>& edit = {}) {
  Hand h;
  if (edit) edit(h);
  const fs::path dir = scratch("bad_" + name) / "ds";
  fs::create_directories(dir / "data");
  dprl::h5::File f = dprl::h5::File::create(dir / "data" / "main_data.hdf5");
  const std::uint64_t t = 3;
  for (int e = 0; e < h.episodes; ++e) {
    const std::string g = "episode_" + std::to_string(e);
    f.create_group(g);
    f.set_attr(g, "id", e == 0 ? h.id0 : e);
    f.set_attr(g, "total_steps", t);
    const auto put = [&](const std::string& key, auto write) {
      if (g + "/" + key != h.drop) write(g + "/" + key);
    };
    const std::uint64_t rows = t + 1 + (e == 0 ? h.extra_obs_rows : 0);
    std::vector<float> obs(rows * 2, 0.0f);
    if (e == 0) obs[2] = h.obs_value;
    put("observations", [&](const std::string& k) {
      const std::uint64_t shape[] = {rows, 2};
      f.write(k, std::span<const float>(obs), shape);
    });
    std::vector<std::int64_t> act(t, 0);
    if (e == 0) act[0] = h.action;
    const std::uint64_t shape1[] = {t};
    put("actions",
        [&](const std::string& k) { f.write(k, std::span<const std::int64_t>(act), shape1); });
    std::vector<float> rew(t, 1.0f);
    put("rewards", [&](const std::string& k) { f.write(k, std::span<const float>(rew), shape1); });
    std::vector<std::uint8_t> term = {0, 0, 1}, trunc(t, 0);
    put("terminations", [&](const std::string& k) {
      if (e == 0 && h.flag != 1) {
        std::vector<std::int64_t> v = {0, 0, h.flag};
        f.write(k, std::span<const std::int64_t>(v), shape1);
      } else {
        f.write_flags(k, term);
      }
    });
    put("truncations", [&](const std::string& k) { f.write_flags(k, trunc); });
  }
  f.close();
  json meta = {{"dataset_id", "bad/" + name + "-v0"},
               {"total_episodes", h.episodes},
               {"total_steps", 3 * h.episodes},
               {"data_format", "hdf5"},
               {"observation_space",
                R"({"type": "Box", "dtype": "float32", "shape": [2], "low": [-1.0, -1.0], )"
                R"("high": [1.0, 1.0]})"},
               {"action_space", R"({"type": "Discrete", "dtype": "int64", "start": 0, "n": 2})"},
               {"minari_version", "0.5.3"}};
  if (h.meta) h.meta(meta);
  dprl::write_file_atomic(dir / "data" / "metadata.json", meta.dump());
  return dir;
}

// The one-line message of loading path (fully validated), or "" when it loads.
std::string load_error(const fs::path& path, std::string_view format = "auto") {
  try {
    dprl::load_dataset(path, format);
  } catch (const DataError& e) {
    const std::string msg = e.what();
    CHECK(msg.find('\n') == std::string::npos);
    return msg;
  }
  return "";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("bad Minari episode data: one DataError naming the file and the key") {
    CHECK(load_error(hand_minari("valid")) == "");
    const std::string h5 = "data/main_data.hdf5: ";
    CHECK(load_error(hand_minari("drop", [](Hand& h) {
            h.drop = "episode_1/actions";
          })).find(h5 + "episode_1/actions: missing") != std::string::npos);
    CHECK(load_error(hand_minari("episodes", [](Hand& h) {
            h.meta = [](json& m) { m["total_episodes"] = 3; };
          })).find(h5 + "episode_2: missing") != std::string::npos);
    CHECK(load_error(hand_minari("rows", [](Hand& h) { h.extra_obs_rows = 1; }))
              .find(h5 + "episode_0/observations: shape (5, 2) but expected 4 rows of 2 values") !=
          std::string::npos);
    CHECK(load_error(hand_minari("flag", [](Hand& h) {
            h.flag = 2;
          })).find(h5 + "episode_0/terminations: row 2 holds 2, not 0/1") != std::string::npos);
    CHECK(load_error(hand_minari("id", [](Hand& h) {
            h.id0 = 5;
          })).find(h5 + "episode_0@id: 5, expected 0") != std::string::npos);
    CHECK(load_error(hand_minari("nan", [](Hand& h) {
            h.obs_value = NAN;
          })).find("observations: episode 0 row 1 is not finite") != std::string::npos);
    CHECK(load_error(hand_minari("outside", [](Hand& h) { h.obs_value = 3.0f; }))
              .find("observations: episode 0 row 1 lies outside Box(-1, 1, (2,))") !=
          std::string::npos);
    CHECK(load_error(hand_minari("action", [](Hand& h) {
            h.action = 7;
          })).find("actions: episode 0 step 0 lies outside Discrete(2)") != std::string::npos);
    // int64 flags holding 0/1 read as well as the enum
    CHECK(load_error(hand_minari("intflags", [](Hand& h) { h.flag = 0; })) == "");
  }

  TEST_CASE("bad Minari metadata: one DataError naming metadata.json and the key") {
    const auto meta_error = [](const std::string& name, std::function<void(json&)> edit) {
      return load_error(hand_minari(name, [&](Hand& h) { h.meta = edit; }));
    };
    const auto has = [](const std::string& msg, const std::string& part) {
      CAPTURE(msg);
      return msg.find(part) != std::string::npos;
    };
    CHECK(has(meta_error("steps_more", [](json& m) { m["total_steps"] = 7; }),
              "total_steps: metadata.json says 7 but the episodes hold 6"));
    CHECK(has(meta_error("steps_less", [](json& m) { m["total_steps"] = 5; }),
              "the episodes hold more steps than total_steps = 5"));
    CHECK(has(meta_error("steps_text", [](json& m) { m["total_steps"] = "six"; }),
              "metadata.json: total_steps: expected a non-negative integer"));
    CHECK(has(meta_error("no_space", [](json& m) { m.erase("observation_space"); }),
              "metadata.json: observation_space: missing"));
    CHECK(has(meta_error("arrow", [](json& m) { m["data_format"] = "arrow"; }),
              "metadata.json: data_format: \"arrow\" is not supported"));
    CHECK(has(meta_error("absurd", [](json& m) { m["total_episodes"] = 1000000000000000; }),
              "total_episodes: 1000000000000000 episodes cannot fit"));
    CHECK(has(meta_error("absurd_steps", [](json& m) { m["total_steps"] = 1000000000000000000; }),
              "total_steps: 1000000000000000000 steps cannot fit"));
    CHECK(has(meta_error("image",
                         [](json& m) {
                           m["observation_space"] =
                               R"({"type": "Box", "dtype": "uint8", "shape": [64, 64, 3], )"
                               R"("low": 0, "high": 255})";
                         }),
              "observation_space: JPEG-encoded image spaces are not supported"));
    CHECK(
        has(meta_error("dict",
                       [](json& m) { m["action_space"] = R"({"type": "Dict", "subspaces": {}})"; }),
            "action_space: type: \"Dict\" spaces are not supported"));
    const fs::path dir = hand_minari("notjson");
    dprl::write_file_atomic(dir / "data" / "metadata.json", "{\"total_steps\": ");
    CHECK(has(load_error(dir), "data/metadata.json: not valid JSON"));
    fs::remove(dir / "data" / "metadata.json");
    CHECK(has(load_error(dir), "data/metadata.json: missing"));
  }

  TEST_CASE("truncated, empty and non-HDF5 files are DataError at every cut") {
    const fs::path dir = scratch("truncated");
    dprl::save_minari(dprl::test::random_dataset(0, 20, 9), dir / "ds");
    const fs::path file = dir / "ds" / "data" / "main_data.hdf5";
    const std::string bytes = dprl::read_file(file);
    for (double cut : {0.0, 0.001, 0.1, 0.5, 0.9, 0.999}) {
      CAPTURE(cut);
      const auto n = static_cast<std::size_t>(cut * static_cast<double>(bytes.size()));
      dprl::write_file_atomic(file, std::string_view(bytes).substr(0, n));
      const std::string msg = load_error(dir / "ds");
      CHECK(msg.find("main_data.hdf5: /: not a readable HDF5 file") != std::string::npos);
    }
    dprl::write_file_atomic(dir / "junk.hdf5", "this is not an HDF5 file at all\n");
    CHECK(load_error(dir / "junk.hdf5").find("junk.hdf5: /: not a readable HDF5 file") !=
          std::string::npos);
  }

  TEST_CASE("a corrupt file on which HDF5 loops allocating is refused, not run out of memory") {
    // tests/fuzz/corpus/dataset/hdf5_heap_loop (libFuzzer): its first byte picks the D4RL reader,
    // the rest is the file; HDF5 1.10.8 alone allocates until the OOM killer stops it
    const fs::path dir = scratch("heap_loop");
    const std::string input = dprl::read_file(fs::path(DPRL_SOURCE_DIR) /
                                              "tests/fuzz/corpus/dataset/hdf5_heap_loop");
    dprl::write_file_atomic(dir / "loop.hdf5", std::string_view(input).substr(1));
    const std::string msg = load_error(dir / "loop.hdf5");
    CHECK(msg.find("loop.hdf5: HDF5 could not read the file's structure") != std::string::npos);
    // a sound file passes the probe
    dprl::save_minari(dprl::test::random_dataset(0, 5, 3), dir / "ok");
    CHECK_NOTHROW(dprl::load_minari(dir / "ok"));
  }

  TEST_CASE("bad D4RL files: missing keys, mismatched rows, absurd extents, user ids") {
    const fs::path dir = scratch("d4rl_bad");
    const auto make = [&](const std::string& name, int reward_rows, bool terminals,
                          std::vector<std::int64_t> users = {}) {
      const fs::path p = dir / (name + ".hdf5");
      dprl::h5::File f = dprl::h5::File::create(p);
      std::vector<float> obs(10, 0.0f), act(5, 0.0f), rew(reward_rows, 1.0f);
      const std::uint64_t s_obs[] = {5, 2}, s_act[] = {5}, s_rew[] = {std::uint64_t(reward_rows)};
      f.write("observations", std::span<const float>(obs), s_obs);
      f.write("actions", std::span<const float>(act), s_act);
      f.write("rewards", std::span<const float>(rew), s_rew);
      if (terminals) f.write_flags("terminals", std::vector<std::uint8_t>{0, 1, 0, 0, 1});
      if (!users.empty()) {
        f.create_group("infos");
        f.write("infos/user_id", std::span<const std::int64_t>(users), s_act);
      }
      f.close();
      return p;
    };
    CHECK(load_error(make("ok", 5, true)) == "");
    CHECK(load_error(make("rows", 4, true))
              .find("rows.hdf5: rewards: shape (4) but observations has 5 rows") !=
          std::string::npos);
    CHECK(load_error(make("noterm", 5, false)).find("noterm.hdf5: terminals: missing") !=
          std::string::npos);
    CHECK(load_error(fixture("d4rl_absurd.hdf5"))
              .find("d4rl_absurd.hdf5: observations: shape claims 16000000000000 bytes but the "
                    "file stores 0") != std::string::npos);
    dprl::LoadOptions opt;
    opt.d4rl.user_id_key = "infos/user_id";
    const auto d4rl_error = [&](const fs::path& p) {
      try {
        dprl::load_dataset(p, opt);
      } catch (const DataError& e) {
        return std::string(e.what());
      }
      return std::string();
    };
    CHECK(d4rl_error(make("nousers", 5, true)).find("infos/user_id: missing") != std::string::npos);
    CHECK(d4rl_error(make("users", 5, true, {1, 1, 2, 2, 2})) == "");
    CHECK(d4rl_error(make("mixed", 5, true, {1, 2, 2, 2, 2}))
              .find("infos/user_id: rows 0 and 1 of one episode hold users 1 and 2") !=
          std::string::npos);
  }

  TEST_CASE("writes are atomic: refused, failed and replaced writes leave no partial folder") {
    const fs::path dir = scratch("atomic");
    const auto d = dprl::test::random_dataset(1, 4, 3);
    dprl::save_minari(d, dir / "ds");
    const std::string before = dprl::read_file(dir / "ds" / "data" / "metadata.json");
    // an existing dataset is kept unless overwrite is asked for
    CHECK_THROWS_WITH_AS(dprl::save_minari(dprl::test::random_dataset(1, 2, 4), dir / "ds"),
                         doctest::Contains("exists and is not empty"), DataError);
    CHECK(dprl::read_file(dir / "ds" / "data" / "metadata.json") == before);
    // a write failing half way (metadata that is not JSON) leaves the old folder and no temp
    auto broken = dprl::test::random_dataset(1, 2, 4);
    broken.mutable_info().metadata_json = "{oops";
    CHECK_THROWS_AS(dprl::save_minari(broken, dir / "ds", {.overwrite = true}), DataError);
    CHECK(dprl::read_file(dir / "ds" / "data" / "metadata.json") == before);
    CHECK_THROWS_AS(dprl::save_minari(broken, dir / "fresh"), DataError);
    CHECK_FALSE(fs::exists(dir / "fresh"));
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& x : fs::directory_iterator(dir)) ++entries;
    CHECK(entries == 1);  // only ds: no *.tmp-* left behind
    // overwrite replaces the whole folder
    dprl::save_minari(dprl::test::random_dataset(1, 2, 4), dir / "ds", {.overwrite = true});
    CHECK(dprl::load_dataset(dir / "ds").num_episodes() == 2);
    // a parent that is a file
    dprl::write_file_atomic(dir / "file", "x");
    CHECK_THROWS_AS(dprl::save_minari(d, dir / "file" / "ds"), DataError);
  }
}
