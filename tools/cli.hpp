// The `dprl` command-line tool: one file per command group, wired together in cli.cpp.
//
// Every command throws dprl::Error on bad input; cli::main prints one line "dprl: <message>" on
// stderr and exits 2 (usage errors reported by CLI11 too). A command that has reported its own
// outcome and wants another exit status (a sweep with failed runs: 1) throws cli::ExitStatus.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "algos/run/experiment.hpp"
#include "engine/policy.hpp"

namespace dprl::tools {
class RasterFrames;  // tools/raster_frames.hpp
}  // namespace dprl::tools

namespace dprl::cli {

int main(int argc, char** argv);

struct ExitStatus {
  int code;
};

void add_env_commands(CLI::App& app);      // envs, env replay, bench env, eval
void add_run_commands(CLI::App& app);      // run, sweep
void add_plot_command(CLI::App& app);      // plot
void add_render_command(CLI::App& app);    // render

class FrameWriter;
// A run of seeded episodes drawn as one animated SVG (dprl render, dprl eval --render), or as PNG
// frames or a GIF when out ends in .png or .gif (tools/raster_frames.hpp): checks the frame rate,
// the output path, that the env has a renderer, that episodes x (max_steps + 1) frames stay
// under the cap and that this build can write the format, all before anything runs (ParamError
// naming the flag); pass observer() to evaluate(), then write() the file (atomically) and print
// its line.
class EpisodeRecording {
 public:
  EpisodeRecording(const Env& env, const std::string& env_flag, int episodes,
                   std::int64_t max_steps, double fps, std::string out, const char* steps_flag);
  ~EpisodeRecording();
  EpisodeObserver& observer();
  // announce: print "wrote FILE (...)" on stdout (dprl eval --json prints only its JSON)
  void write(const std::string& title, bool announce = true);

 private:
  double fps_;
  std::string out_;
  int episodes_;
  std::unique_ptr<tools::RasterFrames> raster_;  // PNG or GIF output; null for SVG
  std::unique_ptr<FrameWriter> writer_;
};
// Seeded episodes of policy on env drawn as dprl render draws them (at most max_steps steps per
// episode), as one SVG document without the animation: its top-level <g> elements are the frames
// in order, the first shown and the others display="none", for a page whose script plays them
// (dprl report). frames (when not null) receives their count. ParamError when env has no
// renderer or the frames would pass dprl render's cap, before anything runs.
std::string episode_frames_svg(Env& env, Policy& policy, int episodes, std::uint64_t seed,
                               std::int64_t max_steps, const std::string& title,
                               std::size_t* frames = nullptr);
void add_report_command(CLI::App& app);    // report
void add_privacy_commands(CLI::App& app);  // privacy epsilon|noise|gaussian|compose|...
void add_primorl_bench(CLI::App& app);     // bench primorl (after add_env_commands)
void add_bench_offline_command(CLI::App& app);  // bench offline (after add_env_commands)
void add_bench_noise_command(CLI::App& app);    // bench noise (after add_env_commands)
void add_dataset_commands(CLI::App& app);  // collect, dataset info|validate, bench dataset
void add_population_commands(CLI::App& app);  // population, bench data-release
void add_agreement_command(CLI::App& app);    // agreement (paper 000 diagnostic)
// `dprl run` on a pipeline file (tools/cli_population.cpp); jobs 0: every CPU.
RunSummary run_pipeline_command(const std::string& file, const algos::RunOptions& opts, int jobs);
void add_audit_commands(CLI::App& app);    // audit mechanism|dpsgd

}  // namespace dprl::cli
