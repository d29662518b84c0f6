// Format detection, Minari's metadata.json and spaces, and the atomic dataset folder.
#include "engine/data/dataset_io.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <type_traits>

#include "engine/data/dataset_hdf5.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"

namespace dprl {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

constexpr const char* kMinariVersion = "0.5.3";  // the layout written (Minari's own check)
constexpr int kDprlFormat = 1;

// Python's json module writes Infinity, -Infinity and NaN bare; quote them so a standard parser
// reads them as strings (json_number turns them back).
std::string quote_python_tokens(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 16);
  bool in_str = false, esc = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_str) {
      out += c;
      if (esc)
        esc = false;
      else if (c == '\\')
        esc = true;
      else if (c == '"')
        in_str = false;
      continue;
    }
    bool replaced = false;
    for (std::string_view tok : {"-Infinity", "Infinity", "NaN"}) {
      if (s.substr(i, tok.size()) == tok) {
        out += fmt::format("\"{}\"", tok);
        i += tok.size() - 1;
        replaced = true;
        break;
      }
    }
    if (replaced) continue;
    if (c == '"') in_str = true;
    out += c;
  }
  return out;
}

json parse_json(std::string_view text, const std::string& where) {
  json j = json::parse(quote_python_tokens(text), nullptr, false);
  if (j.is_discarded()) throw DataError(fmt::format("{}: not valid JSON", where));
  return j;
}

double json_number(const json& j, const std::string& where) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "Infinity") return INFINITY;
    if (s == "-Infinity") return -INFINITY;
    if (s == "NaN") return NAN;
  }
  throw DataError(fmt::format("{}: expected a number, got {}", where, j.dump()));
}

void flatten(const json& j, std::vector<double>& out, const std::string& where) {
  if (j.is_array()) {
    for (const auto& x : j) flatten(x, out, where);
  } else {
    out.push_back(json_number(j, where));
  }
}

std::string number_text(double v) {
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (std::isnan(v)) return "NaN";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.1f}", v);
  return fmt::format("{}", v);
}

const json& member(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    throw DataError(fmt::format("{}: {}: missing", where, key));
  return j.at(key);
}

std::uint64_t count(const json& j, const char* key, const std::string& where) {
  const json& v = member(j, key, where);
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
    throw DataError(
        fmt::format("{}: {}: expected a non-negative integer, got {}", where, key, v.dump()));
  return v.get<std::uint64_t>();
}

// An optional member of type T (json::value throws nlohmann's type_error on a member of another
// type: a DataError naming it instead).
template <class T>
T optional_member(const json& j, const char* key, T fallback, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) return fallback;
  const json& v = j.at(key);
  const bool ok = std::is_same_v<T, bool> ? v.is_boolean() : v.is_string();
  if (!ok)
    throw DataError(fmt::format("{}: {}: expected a {}, got {}", where, key,
                                std::is_same_v<T, bool> ? "boolean" : "string", v.dump()));
  return v.get<T>();
}

// Minari's image spaces (JPEG-encoded unless jpeg_encoding is false): uint8 Box of 2 or 3
// dimensions at least 32 x 32 with bounds 0..255 (minari_storage.py is_image_space). Anything
// that is not one (another type, members of other types) is left to space_from_minari_json.
bool is_image_space(const json& j) {
  if (!j.is_object()) return false;
  const auto is = [&](const char* key, const char* text) {
    return j.contains(key) && j.at(key).is_string() && j.at(key).get<std::string>() == text;
  };
  if (!is("type", "Box") || !is("dtype", "uint8") || !j.contains("shape")) return false;
  const json& shape = j.at("shape");
  const auto at_least_32 = [&](std::size_t i) {
    return shape[i].is_number() && shape[i].get<double>() >= 32;
  };
  return shape.is_array() && (shape.size() == 2 || shape.size() == 3) && at_least_32(0) &&
         at_least_32(1);
}

fs::path temp_sibling(const fs::path& dir) {
  std::random_device rd;
  return dir.parent_path() /
         fmt::format("{}.tmp-{:08x}{:04x}", dir.filename().string(), rd(), ::getpid() & 0xffff);
}

}  // namespace

std::string space_to_minari_json(const Space& space) {
  if (space.is_discrete())
    return fmt::format(R"({{"type": "Discrete", "dtype": "int64", "start": 0, "n": {}}})", space.n);
  std::vector<std::string> lo, hi;
  for (double v : space.low) lo.push_back(number_text(v));
  for (double v : space.high) hi.push_back(number_text(v));
  return fmt::format(
      R"({{"type": "Box", "dtype": "float32", "shape": [{}], "low": [{}], "high": [{}]}})",
      space.low.size(), fmt::join(lo, ", "), fmt::join(hi, ", "));
}

Space space_from_minari_json(std::string_view text, const std::string& where) {
  const json j = parse_json(text, where);
  const json& type = member(j, "type", where);
  if (type == "Discrete") {
    const std::uint64_t n = count(j, "n", where);
    if (n == 0) throw DataError(fmt::format("{}: n: a Discrete space needs n >= 1", where));
    if (j.contains("start") && !(j["start"].is_number_integer() && j["start"] == 0))
      throw DataError(fmt::format("{}: start: Discrete with start {} is not supported (0 only)",
                                  where, j["start"].dump()));
    return Space::discrete(static_cast<std::int64_t>(n));
  }
  if (type != "Box")
    throw DataError(fmt::format("{}: type: {} spaces are not supported (Box and Discrete only)",
                                where, type.dump()));
  const json& shape = member(j, "shape", where);
  std::uint64_t dim = 1;
  if (!shape.is_array()) throw DataError(fmt::format("{}: shape: expected a list", where));
  for (const auto& d : shape) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0 || d.get<std::int64_t>() > (1 << 24))
      throw DataError(fmt::format("{}: shape: bad dimension {}", where, d.dump()));
    dim *= d.get<std::uint64_t>();
  }
  if (dim == 0 || dim > (1u << 24))
    throw DataError(fmt::format("{}: shape: {} components", where, dim));
  std::vector<double> low, high;
  flatten(member(j, "low", where), low, where + ": low");
  flatten(member(j, "high", where), high, where + ": high");
  if (low.size() == 1) low.resize(dim, low[0]);
  if (high.size() == 1) high.resize(dim, high[0]);
  if (low.size() != dim || high.size() != dim)
    throw DataError(fmt::format("{}: low/high: {} and {} values for {} components", where,
                                low.size(), high.size(), dim));
  for (std::size_t i = 0; i < dim; ++i)
    if (std::isnan(low[i]) || std::isnan(high[i]) || low[i] > high[i])
      throw DataError(
          fmt::format("{}: low/high: component {} has bounds [{}, {}]", where, i, low[i], high[i]));
  return Space::box(std::move(low), std::move(high));
}

DatasetFormat parse_dataset_format(std::string_view name) {
  if (name == "auto" || name.empty()) return DatasetFormat::kAuto;
  if (name == "minari") return DatasetFormat::kMinari;
  if (name == "d4rl") return DatasetFormat::kD4rl;
  throw ParamError(fmt::format("format '{}': expected minari, d4rl or auto", name));
}

namespace {

// The dataset folder of a path that is the folder, its data/ or data/main_data.hdf5.
fs::path minari_root(const fs::path& path) {
  std::error_code ec;
  fs::path p = path;
  if (p.filename().empty()) p = p.parent_path();  // trailing slash
  if (fs::is_regular_file(p, ec) && p.filename() == "main_data.hdf5") p = p.parent_path();
  if (p.filename() == "data" && fs::exists(p / "metadata.json", ec)) p = p.parent_path();
  return p;
}

}  // namespace

DatasetFormat detect_dataset_format(const fs::path& path) {
  std::error_code ec;
  const fs::path root = minari_root(path);
  if (fs::is_directory(root / "data", ec)) return DatasetFormat::kMinari;
  if (fs::is_regular_file(path, ec)) {
    const auto ext = path.extension();
    if (ext == ".hdf5" || ext == ".h5") return DatasetFormat::kD4rl;
    throw DataError(
        fmt::format("{}: not a dataset (expected a .hdf5/.h5 file or a Minari "
                    "folder; give format: minari|d4rl)",
                    path.string()));
  }
  if (fs::is_directory(path, ec))
    throw DataError(fmt::format("{}: data/main_data.hdf5: missing (not a Minari dataset folder)",
                                path.string()));
  const std::string problem = file_problem(path);
  throw DataError(fmt::format("{}: {}", path.string(),
                              problem == "missing" ? "no such file or folder" : problem));
}

Dataset load_dataset(const fs::path& path, std::string_view format) {
  LoadOptions options;
  options.format = parse_dataset_format(format);
  return load_dataset(path, options);
}

Dataset load_dataset(const fs::path& path, const LoadOptions& options) {
  DatasetFormat format = options.format;
  if (format == DatasetFormat::kAuto) format = detect_dataset_format(path);
  Dataset data = format == DatasetFormat::kMinari ? load_minari(path, options.use_index)
                                                  : load_d4rl(path, options.d4rl);
  data.validate(path.string());
  return data;
}

Dataset load_minari(const fs::path& path, bool use_index) {
  const fs::path root = minari_root(path);
  const fs::path meta_file = root / "data" / "metadata.json";
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw DataError(fmt::format("{}: no such dataset (file or folder)", path.string()));
  // what is wrong, named: a data/ that cannot be listed, a FIFO, a folder in the file's place
  if (const std::string data_dir = file_problem(root / "data");
      data_dir != "is a folder" && data_dir != "missing")
    throw DataError(fmt::format("{}: data/: {}", root.string(),
                                data_dir.empty() ? "is a file, not a folder" : data_dir));
  if (const std::string problem = file_problem(meta_file); !problem.empty())
    throw DataError(
        problem == "missing"
            ? fmt::format("{}: data/metadata.json: missing (Minari 0.4 layouts without it "
                          "are not supported)",
                          root.string())
            : fmt::format("{}: data/metadata.json: {}", root.string(), problem));
  const std::string where = meta_file.string();
  const json meta = parse_json(read_file(meta_file), where);
  if (!meta.is_object()) throw DataError(fmt::format("{}: not a JSON object", where));
  if (meta.contains("data_format") && meta["data_format"] != "hdf5")
    throw DataError(fmt::format("{}: data_format: {} is not supported (hdf5 only)", where,
                                meta["data_format"].dump()));
  const bool jpeg = optional_member(meta, "jpeg_encoding", true, where);
  DatasetInfo info;
  for (const char* key : {"observation_space", "action_space"}) {
    const json& s = member(meta, key, where);
    if (!s.is_string()) throw DataError(fmt::format("{}: {}: expected a JSON string", where, key));
    const std::string w = fmt::format("{}: {}", where, key);
    if (jpeg && is_image_space(parse_json(s.get<std::string>(), w)))
      throw DataError(fmt::format("{}: JPEG-encoded image spaces are not supported", w));
    (key[0] == 'o' ? info.observation_space : info.action_space) =
        space_from_minari_json(s.get<std::string>(), w);
  }
  info.dataset_id = optional_member(meta, "dataset_id", root.filename().string(), where);
  const std::uint64_t episodes = count(meta, "total_episodes", where);
  const std::uint64_t steps = count(meta, "total_steps", where);
  if (meta.contains("dprl")) {
    const json& d = meta["dprl"];
    const std::string dw = where + ": dprl";
    if (!d.is_object()) throw DataError(fmt::format("{}: expected an object", dw));
    info.env_id = optional_member(d, "env_id", std::string(), dw);
    if (d.contains("env_params")) {
      if (!d["env_params"].is_object())
        throw DataError(fmt::format("{}: env_params: expected an object", dw));
      for (const auto& [k, v] : d["env_params"].items())
        info.env_params.push_back(
            {k, {v.is_string() ? v.get<std::string>() : v.dump(), dw + ".env_params." + k}});
    }
    if (d.contains("metadata")) info.metadata_json = d["metadata"].dump();
  }
  const fs::path h5file = root / "data" / "main_data.hdf5";
  std::optional<DatasetArrays> indexed;
  if (use_index)
    indexed = detail::read_minari_index(root / "data" / "dprl_index.bin", h5file, episodes, steps,
                                        info.observation_space, info.action_space);
  DatasetArrays arrays =
      indexed ? std::move(*indexed)
              : detail::read_minari_episodes(h5file, episodes, steps, info.observation_space,
                                             info.action_space);
  return Dataset::from_arrays(std::move(info), std::move(arrays), h5file.string());
}

bool is_dataset_folder(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "data" / "metadata.json", ec);
}

bool replaceable_dataset_folder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return true;
  return fs::is_directory(dir, ec) && (fs::is_empty(dir, ec) || is_dataset_folder(dir));
}

void save_minari(const Dataset& data, const fs::path& dir_in, const SaveOptions& options) {
  const fs::path dir = dir_in.filename().empty() ? dir_in.parent_path() : dir_in;
  std::error_code ec;
  const bool exists = fs::exists(dir, ec);
  if (exists && !fs::is_directory(dir, ec))
    throw DataError(fmt::format("{}: exists and is not a folder", dir.string()));
  if (exists && !fs::is_empty(dir, ec)) {
    if (!options.overwrite)
      throw DataError(
          fmt::format("{}: exists and is not empty (remove it or use --overwrite)", dir.string()));
    // overwrite replaces a dataset folder, never a folder of something else
    if (!replaceable_dataset_folder(dir))
      throw DataError(fmt::format(
          "{}: exists and is not a Minari dataset folder (no data/metadata.json): not replaced",
          dir.string()));
  }
  if (!dir.parent_path().empty()) make_dirs(dir.parent_path());
  const fs::path tmp = temp_sibling(dir);
  try {
    make_dirs(tmp / "data");
    const fs::path h5file = tmp / "data" / "main_data.hdf5";
    const auto layout = detail::write_minari_episodes(data, h5file);
    detail::write_minari_index(tmp / "data" / "dprl_index.bin", h5file, data, layout);
    const DatasetInfo& info = data.info();
    json meta;
    meta["dataset_id"] = info.dataset_id;
    meta["total_episodes"] = data.num_episodes();
    meta["total_steps"] = data.num_transitions();
    meta["data_format"] = "hdf5";
    meta["jpeg_encoding"] = false;
    meta["observation_space"] = space_to_minari_json(info.observation_space);
    meta["action_space"] = space_to_minari_json(info.action_space);
    meta["minari_version"] = kMinariVersion;
    const double mb = static_cast<double>(fs::file_size(h5file)) / 1e6;
    meta["dataset_size"] = std::round(mb * 10) / 10;
    json extra;
    extra["format"] = kDprlFormat;
    extra["env_id"] = info.env_id;
    json params = json::object();
    for (const auto& [k, v] : info.env_params) params[k] = v.text;
    extra["env_params"] = params;
    if (!info.metadata_json.empty()) {
      json m = json::parse(info.metadata_json, nullptr, false);
      if (m.is_discarded())
        throw DataError(fmt::format("{}: metadata: not valid JSON", dir.string()));
      extra["metadata"] = m;
    }
    meta["dprl"] = extra;
    write_file_atomic(tmp / "data" / "metadata.json", meta.dump(2) + "\n");
    if (exists) {
      const fs::path old = temp_sibling(dir);
      fs::rename(dir, old);
      fs::rename(tmp, dir);
      fs::remove_all(old, ec);
    } else {
      fs::rename(tmp, dir);
    }
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    throw DataError(fmt::format("{}: cannot write: {}", dir.string(), e.code().message()));
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace dprl
