// engine/state_io: values round-trip through a saver and a loader; a load refuses (DataError)
// a wrong section, a stored length that overflows or exceeds the bytes left, a bounded counter
// outside its range and a flag byte other than 0 or 1; checkpoint files refuse a wrong magic,
// version, length and checksum. RunDir's metrics section refuses an absurd column count, and
// columns from a checkpoint that are not the run's make the next row a DataError, not an abort.
#include "engine/state_io.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "engine/run_dir.hpp"

using namespace dprl;

namespace {

std::string u64_bytes(std::uint64_t v) { return std::string(reinterpret_cast<char*>(&v), 8); }

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("state io round-trips values and refuses what does not fit") {
    StateIo out;
    out.section("s");
    std::int64_t step = 42;
    int idx = 3;
    bool flag = true;
    std::vector<double> v = {1.5, -2.0};
    std::string text = "abc";
    out(step);
    out.bounded(idx, 0, 4, "index");
    out(flag);
    out(v);
    out(text);
    const std::string bytes = out.take();

    std::int64_t step2 = 0;
    int idx2 = 0;
    bool flag2 = false;
    std::vector<double> v2;
    std::string text2;
    StateIo in(bytes, "mem");
    in.section("s");
    in(step2);
    in.bounded(idx2, 0, 4, "index");
    in(flag2);
    in(v2);
    in(text2);
    in.expect_end();
    CHECK(step2 == 42);
    CHECK(idx2 == 3);
    CHECK(flag2);
    CHECK(v2 == v);
    CHECK(text2 == "abc");

    // a counter outside its range: the message names it
    StateIo narrow(bytes, "mem");
    narrow.section("s");
    narrow(step2);
    try {
      narrow.bounded(idx2, 0, 2, "index");
      FAIL("an index of 3 loaded into [0, 2]");
    } catch (const DataError& e) {
      CHECK(std::string(e.what()).find("index = 3, outside [0, 2]") != std::string::npos);
    }
    // another section
    StateIo other(bytes, "mem");
    CHECK_THROWS_AS(other.section("t"), DataError);
  }

  TEST_CASE("state io refuses lengths that overflow or exceed the bytes and non-bool flags") {
    // 2^61 doubles: 2^64 bytes, which wraps to 0 in a naive n * sizeof(T) check
    const std::string huge = u64_bytes(std::uint64_t{1} << 61) + std::string(16, '\0');
    std::vector<double> v;
    StateIo a(huge, "mem");
    CHECK_THROWS_AS(a(v), DataError);
    std::string s;
    StateIo b(huge, "mem");
    CHECK_THROWS_AS(b(s), DataError);
    const std::string two(1, '\2');
    bool flag = false;
    StateIo c(two, "mem");
    CHECK_THROWS_AS(c(flag), DataError);
  }

  TEST_CASE("checkpoint files refuse a wrong magic, version, length or checksum") {
    const std::string file = encode_checkpoint("payload");
    CHECK(decode_checkpoint(file, "f") == "payload");
    CHECK_THROWS_AS(decode_checkpoint("", "f"), DataError);
    std::string bad = file;
    bad[0] = 'X';
    CHECK_THROWS_AS(decode_checkpoint(bad, "f"), DataError);
    bad = file;
    bad[8] = 9;  // version
    CHECK_THROWS_AS(decode_checkpoint(bad, "f"), DataError);
    CHECK_THROWS_AS(decode_checkpoint(file.substr(0, file.size() - 1), "f"), DataError);
    bad = file;
    bad[22] ^= 1;  // a payload byte
    CHECK_THROWS_AS(decode_checkpoint(bad, "f"), DataError);
  }

  TEST_CASE("run dir metrics from a checkpoint: absurd counts and foreign columns are refused") {
    const auto d = std::filesystem::temp_directory_path() / "dprl_state_io_test_metrics";
    std::filesystem::remove_all(d);
    {
      RunDir dir(d);
      // 2^28 column names announced in a few bytes (StateIo reads a view: keep the bytes alive)
      const std::string bytes =
          std::string("\7\0\0\0\0\0\0\0metrics", 15) + u64_bytes(1u << 28) + std::string(64, '\0');
      StateIo io(bytes, "mem");
      CHECK_THROWS_AS(dir.sync_metrics(io), DataError);
    }
    {
      RunDir writer(d);
      writer.append_metrics({{"step", 1}, {"x", 2}});
      StateIo save;
      writer.sync_metrics(save);
      const std::string bytes = save.take();
      RunDir reader(d);
      StateIo load(bytes, "mem");
      reader.sync_metrics(load);
      reader.append_metrics({{"step", 2}, {"x", 3}});  // the same columns
      CHECK_THROWS_AS(reader.append_metrics({{"step", 3}}), DataError);
    }
    std::filesystem::remove_all(d);
  }
}
