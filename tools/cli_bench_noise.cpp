// dprl bench noise: the cost of one Gaussian noise value in a private learner's release.
//
// The workload: --n values (default 69,136, the offline CQL network's parameter count) released
// with base noise sd 1 for L2 sensitivity 1 (noise multiplier 1) through the learners' release
// (privacy/secure_release.hpp, add_gaussian_release): --source os-entropy snaps them to the plan's
// grid and adds table-based discrete Gaussian noise (the exact sampler below 4096 values) on
// ChaCha20 bits, as a formal run does; --source seeded adds the seeded source's ziggurat normals
// on ChaCha8Rand words (stream 2), as a `noise: seeded` run does. Figures are medians over
// --repeats timed releases of thread CPU time: ns_per_value, bits_per_value (64-bit words drawn,
// counted on one more release, times 64 / n) and ns_per_word (the source's own cost of 64 bits,
// drawn in bulk). With os-entropy also the exact sampler's ns per value (Canonne, Kamath and
// Steinke; over n / 16 values), the reference the table sampler replaces.
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "privacy/chacha20.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/secure_release.hpp"
#include "privacy/table_gaussian.hpp"
#include "tools/cli.hpp"
#include "tools/cli_util.hpp"

namespace dprl::cli {
namespace {

struct BenchNoiseOpts {
  std::string source = "os-entropy";
  long long n = 69136;
  int repeats = 21;
  bool json = false;
};

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Counts the words drawn from the wrapped source.
class CountingNoise final : public privacy::NoiseSource {
 public:
  explicit CountingNoise(privacy::NoiseSource& inner)
      : NoiseSource(inner.secure()), inner_(inner) {}
  std::string name() const override { return inner_.name(); }
  std::uint64_t next_u64() override {
    ++words;
    return inner_.next_u64();
  }
  void fill_u64(std::span<std::uint64_t> out) override {
    words += out.size();
    inner_.fill_u64(out);
  }
  std::uint64_t words = 0;

 private:
  privacy::NoiseSource& inner_;
};

void cmd_bench_noise(const BenchNoiseOpts& o) {
  const auto n = static_cast<std::size_t>(o.n);
  const bool secure = o.source == "os-entropy";
  auto noise = secure ? privacy::make_os_entropy_noise(true) : privacy::make_seeded_noise(0, 0);
  const privacy::SecurePlan plan = privacy::gaussian_release_plan(1.0, 1.0, n, secure);
  std::vector<double> x(n);
  auto fresh = [&] {
    for (std::size_t i = 0; i < n; ++i) x[i] = 0.001 * static_cast<double>(i % 1000);
  };
  // the timed releases (one untimed first: the table is built by the plan, pages touched here)
  std::vector<double> per_value;
  for (int r = 0; r <= o.repeats; ++r) {
    fresh();
    const double t0 = thread_cpu_ns();
    privacy::add_gaussian_release(x, plan.scale, plan.grid, *noise);
    const double t1 = thread_cpu_ns();
    if (r > 0) per_value.push_back((t1 - t0) / static_cast<double>(n));
  }
  // bits: the words one more release draws, counted (the seeded bulk normals on a ChaCha8Rand of
  // their own: one word per value plus those of the draws outside their box)
  double drawn = 0;
  fresh();
  if (secure) {
    CountingNoise counting(*noise);
    privacy::add_gaussian_release(x, plan.scale, plan.grid, counting);
    drawn = static_cast<double>(counting.words);
  } else {
    privacy::Chacha8Rand gen({8, 7, 6, 5, 4, 3, 2, 1});
    privacy::add_seeded_normals(gen, x, plan.scale);
    drawn = static_cast<double>(gen.words_drawn());
  }
  const double bits_per_value = 64.0 * drawn / static_cast<double>(n);
  // the cost per 64-bit word of the bits the sampler reads: the source's own (ChaCha20) for
  // os-entropy, ChaCha8Rand for the seeded bulk normals
  std::vector<std::uint64_t> words(n);
  std::vector<double> per_word;
  privacy::Chacha8Rand bulk({1, 2, 3, 4, 5, 6, 7, 8});
  for (int r = 0; r < o.repeats; ++r) {
    const double t0 = thread_cpu_ns();
    if (secure) {
      noise->fill_u64(words);
    } else {
      for (std::size_t i = 0; i < n;) {
        const auto got = bulk.take(n - i);
        std::copy(got.begin(), got.end(), words.begin() + static_cast<std::ptrdiff_t>(i));
        i += got.size();
      }
    }
    per_word.push_back((thread_cpu_ns() - t0) / static_cast<double>(n));
  }
  // the exact sampler on n / 16 values (at least 1)
  double exact = 0.0;
  if (secure) {
    std::vector<double> y(std::max<std::size_t>(1, n / 16), 0.0);
    std::vector<double> t;
    for (int r = 0; r < std::max(3, o.repeats / 4); ++r) {
      const double t0 = thread_cpu_ns();
      privacy::secure_gaussian_release_exact(y, plan.scale, plan.grid, *noise);
      t.push_back((thread_cpu_ns() - t0) / static_cast<double>(y.size()));
    }
    exact = median(t);
  }
  std::string sampler = "ziggurat on ChaCha8Rand (seeded, not formal)";
  int levels = 0;
  if (secure && n >= privacy::kTableMinValues) {
    levels =
        privacy::table_gaussian(privacy::secure_gaussian_steps(plan.scale, plan.grid))->levels();
    sampler = fmt::format("table discrete Gaussian ({} tables)", levels);
  } else if (secure) {
    sampler = "exact discrete Gaussian";
  }
  const double ns = median(per_value), ns_word = median(per_word);
  if (o.json) {
    nlohmann::ordered_json j;
    j["source"] = o.source;
    j["noise"] = noise->name();
    j["n"] = n;
    j["sampler"] = sampler;
    j["grid"] = plan.grid;
    j["noise_sd"] = plan.scale;
    if (secure) j["width_grid_steps"] = privacy::secure_gaussian_steps(plan.scale, plan.grid);
    j["ns_per_value"] = ns;
    j["bits_per_value"] = bits_per_value;
    j["ns_per_word"] = ns_word;
    j["bits_cost_share"] = ns_word * bits_per_value / 64.0 / ns;
    if (secure) j["exact_ns_per_value"] = exact;
    j["sampler_tv_per_release"] = plan.sampler_tv;
    j["repeats"] = o.repeats;
    j["clock"] = "thread CPU time, medians";
    fmt::print("{}\n", j.dump());
  } else {
    fmt::print(
        "{} noise, {} values, {}: {:.2f} ns a value, {:.1f} bits a value ({:.2f} ns a 64-bit "
        "word: the bits are {:.0f}% of the cost){} (thread CPU time, medians of {})\n",
        o.source, n, sampler, ns, bits_per_value, ns_word,
        100.0 * ns_word * bits_per_value / 64.0 / ns,
        secure ? fmt::format("; exact sampler {:.1f} ns a value", exact) : "", o.repeats);
  }
}

}  // namespace

void add_bench_noise_command(CLI::App& app) {
  CLI::App* bench = app.get_subcommand("bench");
  auto o = std::make_shared<BenchNoiseOpts>();
  auto* cmd = bench->add_subcommand(
      "noise", "ns and random bits per Gaussian noise value of a private release (medians)");
  cmd->add_option("--source", o->source, "os-entropy (default; formal) or seeded")
      ->check(CLI::IsMember({"seeded", "os-entropy"}));
  cmd->add_option("--n", o->n, "values per release (default 69136)")
      ->check(CLI::Range(1LL, 1LL << 28));
  cmd->add_option("--repeats", o->repeats, "timed releases (default 21)")
      ->check(CLI::Range(1, 10000));
  cmd->add_flag("--json", o->json, "print JSON");
  cmd->callback([o] { cmd_bench_noise(*o); });
}

}  // namespace dprl::cli
