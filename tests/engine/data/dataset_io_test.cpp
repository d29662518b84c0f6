// Minari and D4RL files: round trips bit for bit, files written by h5py, format detection, spaces.
// The bad-data matrix is in dataset_io_bad_test.cpp.
#include "engine/data/dataset_io.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/rng.hpp"
#include "tests/engine/data/dataset_test_util.hpp"

namespace fs = std::filesystem;
using dprl::DataError;
using dprl::Dataset;
using dprl::Space;
using dprl::test::fixture;
using dprl::test::scratch;

namespace {

template <class T>
bool same_bits(std::span<const T> a, std::span<const T> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

void check_equal(const Dataset& a, const Dataset& b) {
  CHECK(a.info().dataset_id == b.info().dataset_id);
  CHECK(a.info().env_id == b.info().env_id);
  CHECK(a.info().metadata_json == b.info().metadata_json);
  REQUIRE(a.info().env_params.size() == b.info().env_params.size());
  for (std::size_t i = 0; i < a.info().env_params.size(); ++i) {
    CHECK(a.info().env_params[i].first == b.info().env_params[i].first);
    CHECK(a.info().env_params[i].second.text == b.info().env_params[i].second.text);
  }
  for (auto [x, y] : {std::pair{&a.info().observation_space, &b.info().observation_space},
                      std::pair{&a.info().action_space, &b.info().action_space}}) {
    CHECK(x->kind == y->kind);
    CHECK(x->n == y->n);
    CHECK(x->low == y->low);
    CHECK(x->high == y->high);
  }
  REQUIRE(a.num_episodes() == b.num_episodes());
  for (std::size_t e = 0; e < a.num_episodes(); ++e) {
    CHECK(a.episode_start(e) == b.episode_start(e));
    CHECK(a.episode_seed(e) == b.episode_seed(e));
  }
  CHECK(same_bits(a.observations(), b.observations()));
  CHECK(same_bits(a.actions(), b.actions()));
  CHECK(same_bits(a.rewards(), b.rewards()));
  CHECK(same_bits(a.terminations(), b.terminations()));
  CHECK(same_bits(a.truncations(), b.truncations()));
  CHECK(same_bits(a.user_ids(), b.user_ids()));
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("Minari round trip: every array bit for bit, users, seeds, env params, metadata") {
    const auto dir = scratch("roundtrip");
    for (int kind = 0; kind < 3; ++kind) {
      CAPTURE(kind);
      const Dataset d = dprl::test::random_dataset(kind, 7, 1234 + kind);
      const fs::path out = dir / std::to_string(kind);
      dprl::save_minari(d, out);
      CHECK(fs::is_regular_file(out / "data" / "main_data.hdf5"));
      const Dataset back = dprl::load_dataset(out);
      check_equal(d, back);
      // and through the explicit format, the data/ folder and the file itself
      check_equal(d, dprl::load_dataset(out / "data", "minari"));
      check_equal(d, dprl::load_minari(out / "data" / "main_data.hdf5"));
      // the same through HDF5 alone, without the index
      CHECK(fs::is_regular_file(out / "data" / "dprl_index.bin"));
      check_equal(d, dprl::load_minari(out, false));
    }
  }

  TEST_CASE("the index is ignored once main_data.hdf5 changes or the index is damaged") {
    const auto dir = scratch("index");
    const Dataset d = dprl::test::random_dataset(0, 5, 77);
    dprl::save_minari(d, dir / "ds");
    const fs::path h5 = dir / "ds" / "data" / "main_data.hdf5";
    const fs::path index = dir / "ds" / "data" / "dprl_index.bin";
    // damaged index (one byte flipped): the checksum fails, HDF5 is read
    std::string bytes = dprl::read_file(index);
    bytes[100] = static_cast<char>(bytes[100] ^ 1);
    dprl::write_file_atomic(index, bytes);
    check_equal(d, dprl::load_dataset(dir / "ds"));
    // a main_data.hdf5 rewritten by another tool: its time stamp differs, HDF5 is read
    dprl::save_minari(d, dir / "ds2");
    fs::last_write_time(dir / "ds2" / "data" / "main_data.hdf5",
                        fs::last_write_time(h5) + std::chrono::seconds(5));
    check_equal(d, dprl::load_dataset(dir / "ds2"));
    // a user id changed in the HDF5 file is seen (the index is not trusted any more)
    {
      // set_attr creates; rewrite the file's episode 0 user through a fresh copy of the data
      Dataset relabelled = d;
      relabelled.set_user_id(0, 99);
      dprl::save_minari(relabelled, dir / "ds3");
      fs::copy_file(dir / "ds" / "data" / "dprl_index.bin", dir / "ds3" / "data" / "dprl_index.bin",
                    fs::copy_options::overwrite_existing);
      CHECK(dprl::load_dataset(dir / "ds3").user_id(0) == 99);
    }
  }

  TEST_CASE("loads from several threads take turns in HDF5 and agree") {
    const auto dir = scratch("threads");
    const Dataset d = dprl::test::random_dataset(2, 30, 8);
    dprl::save_minari(d, dir / "ds");
    std::vector<Dataset> got(4);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < got.size(); ++i) {
      threads.emplace_back([&, i] {
        // through HDF5 (no index) and the D4RL reader at once
        got[i] = i % 2 ? dprl::load_minari(dir / "ds", false)
                       : dprl::load_dataset(fixture("d4rl_gzip.hdf5"));
      });
#if defined(__SANITIZE_ADDRESS__)
      // every HDF5 open forks a probe (engine/data/hdf5_file.cpp); GCC 12's AddressSanitizer
      // allocator is not fork-safe, so a child forked while another thread is inside malloc can
      // wait forever on that thread's lock (glibc's malloc, which release builds use, is fork-safe):
      // under ASan the threads run one after another
      threads.back().join();
#endif
    }
    for (auto& t : threads)
      if (t.joinable()) t.join();
    check_equal(d, got[1]);
    check_equal(d, got[3]);
    check_equal(got[0], got[2]);
  }

  TEST_CASE("metadata.json carries Minari's keys and ours") {
    const auto dir = scratch("metadata");
    const Dataset d = dprl::test::random_dataset(0, 3, 5);
    dprl::save_minari(d, dir / "ds");
    const auto j = nlohmann::json::parse(dprl::read_file(dir / "ds" / "data" / "metadata.json"));
    CHECK(j["dataset_id"] == d.info().dataset_id);
    CHECK(j["total_episodes"] == 3);
    CHECK(j["total_steps"] == d.num_transitions());
    CHECK(j["data_format"] == "hdf5");
    CHECK(j["minari_version"] == "0.5.3");
    CHECK(j["observation_space"].is_string());
    CHECK(j["action_space"].get<std::string>() ==
          R"({"type": "Discrete", "dtype": "int64", "start": 0, "n": 4})");
    CHECK(j["dprl"]["env_id"] == "testenv");
    CHECK(j["dprl"]["env_params"]["gravity"] == "9.8");
  }

  TEST_CASE(
      "h5py-written Minari folder: float32 Box, int64 Discrete, float64 rewards, enum flags") {
    const Dataset d = dprl::load_dataset(fixture("minari_discrete"));
    CHECK(d.info().dataset_id == "test/cartpole/fixture-v0");
    REQUIRE(d.num_episodes() == 3);
    CHECK(d.obs_dim() == 4);
    CHECK(d.info().action_space.n == 2);
    CHECK(d.info().observation_space.high[0] == static_cast<double>(4.8f));
    CHECK(std::isinf(d.info().observation_space.high[1]));
    for (std::size_t e = 0; e < 3; ++e) {
      CHECK(d.episode_length(e) == 3 + e);
      CHECK(d.user_id(e) == static_cast<std::int64_t>(e));  // no user_id attribute: the index
      CHECK(d.episode_seed(e) == (e < 2 ? 100 + static_cast<std::int64_t>(e) : -1));
      for (std::size_t k = 0; k < d.episode_length(e); ++k) {
        const std::size_t t = d.episode_start(e) + k;
        CHECK(d.obs(t, e)[0] == static_cast<float>(e) / 2);
        CHECK(d.obs(t, e)[2] == static_cast<float>(k / 100.0));
        CHECK(d.next_obs(t, e)[3] == -static_cast<float>(k + 1));
        CHECK(d.discrete_action(t) == static_cast<std::int64_t>((k + e) % 2));
        CHECK(d.reward(t) == 1.0f);
        const bool last = k + 1 == d.episode_length(e);
        CHECK(d.terminated(t) == (last && e < 2));
        CHECK(d.truncated(t) == (last && e == 2));
      }
    }
  }

  TEST_CASE("h5py-written Minari folder: float64 (2, 2) observations flatten, int8 flags") {
    const Dataset d = dprl::load_dataset(fixture("minari_box"));
    REQUIRE(d.num_transitions() == 4);
    CHECK(d.obs_dim() == 4);
    CHECK(d.info().action_space.low == std::vector<double>{-2.0});
    for (std::size_t t = 0; t < 4; ++t) {
      const auto o = d.obs(t, 0);
      CHECK(o[0] == static_cast<float>(t));
      CHECK(o[1] == 0.25f);
      CHECK(o[2] == -static_cast<float>(t));
      CHECK(o[3] == static_cast<float>(1e-3 * static_cast<double>(t)));
      CHECK(d.action(t)[0] == static_cast<float>(t / 4.0 - 1));
      CHECK(d.reward(t) == static_cast<float>(-static_cast<double>(t) / 8));
    }
    CHECK(d.truncated(3));
    CHECK(d.episode_seed(0) == 7);
  }

  TEST_CASE("h5py-written D4RL file: gzip, bool flags, episodes split at terminals and timeouts") {
    const Dataset d = dprl::load_dataset(fixture("d4rl_gzip.hdf5"));
    // rows 0-3 end in a terminal (kept whole, final observation repeated); rows 4-7 end in a
    // timeout and rows 8-9 at the end of the file (last step dropped: its successor is unknown)
    REQUIRE(d.num_episodes() == 3);
    CHECK(d.episode_length(0) == 4);
    CHECK(d.episode_length(1) == 3);
    CHECK(d.episode_length(2) == 1);
    CHECK(d.terminated(3));
    CHECK(d.next_obs(3, 0)[0] == 3);  // repeated
    CHECK(d.truncated(6));
    CHECK_FALSE(d.terminated(6));
    CHECK(d.next_obs(6, 1)[0] == 7);  // row 7's observation ends episode 1
    CHECK_FALSE(d.truncated(7));
    CHECK_FALSE(d.terminated(7));
    CHECK(d.next_obs(7, 2)[0] == 9);
    CHECK(d.obs(5, 1)[1] == 0.5f);  // transition 5 is row 5
    CHECK(d.action(5)[0] == 5 / 20.0f);
    CHECK(d.reward(7) == 4.0f);  // row 8
    CHECK(d.user_id(2) == 2);
    const auto meta = nlohmann::json::parse(d.info().metadata_json);
    CHECK(meta["d4rl"]["metadata"]["algorithm"] == "SAC");
    CHECK(meta["d4rl"]["metadata"]["iteration"] == 42);
    CHECK_FALSE(meta["d4rl"]["metadata"].contains("policy/fc0/weight"));
    CHECK(meta["d4rl"]["dropped_transitions"] == 2);
  }

  TEST_CASE("h5py-written D4RL file: next_observations, N x 1 rewards, float flags, user key") {
    dprl::LoadOptions opt;
    opt.d4rl.user_id_key = "infos/user_id";
    const Dataset d = dprl::load_dataset(fixture("d4rl_next_obs.hdf5"), opt);
    REQUIRE(d.num_episodes() == 2);
    CHECK(d.num_transitions() == 6);
    CHECK(d.user_id(0) == 10);
    CHECK(d.user_id(1) == 20);
    CHECK(d.next_obs(2, 0)[0] == 2.5f);  // the stored next observation of row 2
    CHECK(d.next_obs(5, 1)[1] == 11.0f);
    CHECK(d.obs(4, 1)[1] == 8.0f);
    CHECK(d.reward(4) == 4.0f);
    CHECK(d.terminated(2));
    // without the key: one user per episode
    CHECK(dprl::load_dataset(fixture("d4rl_next_obs.hdf5")).user_id(1) == 1);
  }

  TEST_CASE("D4RL without timeouts: max_episode_steps also ends episodes") {
    dprl::LoadOptions opt;
    opt.d4rl.max_episode_steps = 2;
    const Dataset d = dprl::load_dataset(fixture("d4rl_next_obs.hdf5"), opt);
    // rows 0-1 (limit), 2 (terminal), 3-4 (limit), 5 (terminal)
    REQUIRE(d.num_episodes() == 4);
    CHECK(d.truncated(1));
    CHECK(d.terminated(2));
  }

  TEST_CASE("format detection from the path, and the explicit override") {
    CHECK(dprl::detect_dataset_format(fixture("minari_box")) == dprl::DatasetFormat::kMinari);
    CHECK(dprl::detect_dataset_format(fixture("minari_box") / "data" / "main_data.hdf5") ==
          dprl::DatasetFormat::kMinari);
    CHECK(dprl::detect_dataset_format(fixture("d4rl_gzip.hdf5")) == dprl::DatasetFormat::kD4rl);
    CHECK_THROWS_WITH_AS(dprl::detect_dataset_format(fixture("nope.hdf5")),
                         doctest::Contains("no such file or folder"), DataError);
    const auto dir = scratch("detect");
    dprl::write_file_atomic(dir / "x.csv", "1,2\n");
    CHECK_THROWS_WITH_AS(dprl::detect_dataset_format(dir / "x.csv"),
                         doctest::Contains("give format: minari|d4rl"), DataError);
    CHECK_THROWS_WITH_AS(dprl::detect_dataset_format(dir),
                         doctest::Contains("data/main_data.hdf5: missing"), DataError);
    CHECK_THROWS_AS(dprl::parse_dataset_format("parquet"), dprl::ParamError);
    // a D4RL file read as Minari fails cleanly
    CHECK_THROWS_AS(dprl::load_dataset(fixture("d4rl_gzip.hdf5"), "minari"), DataError);
  }

  TEST_CASE("Minari space JSON: Python's Infinity tokens, nested bounds, unsupported kinds") {
    const Space b = Space::box({-1.5, -INFINITY}, {2.0, INFINITY});
    const std::string s = dprl::space_to_minari_json(b);
    CHECK(s == R"({"type": "Box", "dtype": "float32", "shape": [2], "low": [-1.5, -Infinity], )"
               R"("high": [2.0, Infinity]})");
    const Space back = dprl::space_from_minari_json(s, "w");
    CHECK(back.low == b.low);
    CHECK(back.high == b.high);
    const Space nested = dprl::space_from_minari_json(
        R"({"type": "Box", "dtype": "float64", "shape": [2, 2], "low": [[0, 1], [2, 3]],
            "high": [[4, 5], [6, Infinity]]})",
        "w");
    CHECK(nested.low == std::vector<double>{0, 1, 2, 3});
    CHECK(nested.high[3] == INFINITY);
    const Space scalar_bounds = dprl::space_from_minari_json(
        R"({"type": "Box", "dtype": "float32", "shape": [3], "low": -1, "high": 1})", "w");
    CHECK(scalar_bounds.dim() == 3);
    CHECK(dprl::space_from_minari_json(R"({"type": "Discrete", "n": 5})", "w").n == 5);
    const auto bad = [](const char* json) { return dprl::space_from_minari_json(json, "sp"); };
    CHECK_THROWS_WITH_AS(bad(R"({"type": "Dict", "subspaces": {}})"),
                         doctest::Contains("sp: type: \"Dict\" spaces are not supported"),
                         DataError);
    CHECK_THROWS_WITH_AS(bad(R"({"type": "Discrete", "n": 3, "start": 1})"),
                         doctest::Contains("start"), DataError);
    CHECK_THROWS_WITH_AS(bad(R"({"type": "Box", "shape": [2], "low": [0, NaN], "high": [1, 1]})"),
                         doctest::Contains("component 1"), DataError);
    CHECK_THROWS_WITH_AS(bad(R"({"type": "Box", "shape": [3], "low": [0, 0], "high": [1, 1]})"),
                         doctest::Contains("2 and 2 values for 3 components"), DataError);
    CHECK_THROWS_WITH_AS(bad("{not json"), "sp: not valid JSON", DataError);
    CHECK_THROWS_WITH_AS(bad(R"({"n": 3})"), "sp: type: missing", DataError);
  }
}
