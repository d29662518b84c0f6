// dprl render: seeded episodes of a policy drawn as one animated SVG (docs/render.md)
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "algos/core/policies.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"
#include "engine/policy.hpp"
#include "envs/register_envs.hpp"
#include "envs/render.hpp"
#include "tools/cli.hpp"
#include "tools/cli_util.hpp"
#include "tools/raster_frames.hpp"

namespace dprl::cli {
namespace {

constexpr double kRenderWidthPx = 600;
constexpr double kRenderCaptionPx = 24;
// at most this many frames per file: episodes x (max steps + 1), checked before running
constexpr double kMaxRenderFrames = 20000;

struct RenderOpts {
  std::string env, policy, out;
  std::vector<std::string> params;
  std::uint64_t seed = 0;
  int episodes = 1;
  std::int64_t max_steps = 0;  // 0: the env's time limit
  double fps = 30;
};

}  // namespace

// Draws one <g> per frame into body: the scene and a caption strip below it. ends holds where
// each frame's closing tag starts (its animation goes there once the frame count is known). With
// raster set, the frames go to it as pixels instead (body stays empty; ends counts them).
class FrameWriter final : public EpisodeObserver {
 public:
  FrameWriter(int episodes, std::int64_t max_steps, tools::RasterFrames* raster = nullptr)
      : episodes_(episodes), max_steps_(max_steps), raster_(raster) {}

  void on_reset(const Env& env, int episode) override { frame(env, episode, 0, 0, ""); }
  bool on_step(const Env& env, int episode, std::int64_t step, const StepResult& r,
               double ret) override {
    frame(env, episode, step, ret,
          r.terminated  ? " (terminated)"
          : r.truncated ? " (truncated)"
                        : "");
    return step < max_steps_;
  }

  std::string body;
  std::vector<std::size_t> ends;
  double scene_height_px = 0;

 private:
  void frame(const Env& env, int episode, std::int64_t step, double ret, const char* end) {
    const auto scene = envs::render_scene(env);
    DPRL_CHECK(scene.has_value());
    if (raster_ != nullptr) {
      raster_->add(*scene, fmt::format("episode {}/{}  step {}  return {:g}{}", episode + 1,
                                       episodes_, step, ret, end));
      ends.push_back(0);
      return;
    }
    scene_height_px = envs::svg_height(*scene, kRenderWidthPx);
    body += ends.empty() ? "<g>\n" : "<g display=\"none\">\n";
    envs::append_svg(*scene, kRenderWidthPx, 0, body);
    fmt::format_to(std::back_inserter(body),
                   "<rect x=\"0\" y=\"{:.2f}\" width=\"{:.0f}\" height=\"{:.0f}\" "
                   "fill=\"#ffffff\"/>\n<text x=\"8\" y=\"{:.2f}\" font-size=\"14\" "
                   "font-family=\"sans-serif\" fill=\"#000000\">episode {}/{}  step {}  "
                   "return {:g}{}</text>\n",
                   scene_height_px, kRenderWidthPx, kRenderCaptionPx, scene_height_px + 17,
                   episode + 1, episodes_, step, ret, end);
    ends.push_back(body.size());
    body += "</g>\n";
  }

  int episodes_;
  std::int64_t max_steps_;
  tools::RasterFrames* raster_;
};

namespace {

// The folder --out lands in must exist and --out must not be one.
void check_render_out(const std::string& out) {
  namespace fs = std::filesystem;
  if (out.empty()) throw ParamError("--out: empty file name");
  const fs::path p(out);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw ParamError(fmt::format("--out {}: {} is not a folder", out, dir.string()) +
                     (fs::exists(dir, ec) ? "" : " (it does not exist)"));
  if (fs::is_directory(p, ec)) throw ParamError(fmt::format("--out {}: is a folder", out));
}

// The animated SVG of the frames a FrameWriter drew, frame i shown during [i, i + 1) / n of a loop
// of n / fps seconds, repeated; fps 0: the frames without the animation.
std::string animated_svg(const FrameWriter& writer, double fps, const std::string& title) {
  const auto n = static_cast<std::int64_t>(writer.ends.size());
  const double height = writer.scene_height_px + kRenderCaptionPx;
  std::string svg = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.2f}\">\n"
      "<title>{}: {} frames{}</title>\n",
      kRenderWidthPx, std::ceil(height), kRenderWidthPx, height, envs::xml_escape(title), n,
      fps > 0 ? fmt::format(" at {:g} fps", fps) : std::string());
  const std::string& body = writer.body;
  svg.reserve(body.size() + static_cast<std::size_t>(n) * 160 + 256);
  const double dur = static_cast<double>(n) / fps;
  std::size_t pos = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::size_t mark = writer.ends[static_cast<std::size_t>(i)];
    svg.append(body, pos, mark - pos);
    pos = mark;
    if (n == 1 || fps <= 0) continue;
    const double a = static_cast<double>(i) / n, b = static_cast<double>(i + 1) / n;
    const char* values = i == 0 ? "inline;none" : i + 1 == n ? "none;inline" : "none;inline;none";
    const std::string times = i == 0       ? fmt::format("0;{:.8f}", b)
                              : i + 1 == n ? fmt::format("0;{:.8f}", a)
                                           : fmt::format("0;{:.8f};{:.8f}", a, b);
    fmt::format_to(std::back_inserter(svg),
                   "<animate attributeName=\"display\" values=\"{}\" keyTimes=\"{}\" "
                   "dur=\"{:.6g}s\" calcMode=\"discrete\" repeatCount=\"indefinite\"/>",
                   values, times, dur);
  }
  svg.append(body, pos, std::string::npos);
  svg += "</svg>\n";
  return svg;
}

void cmd_render(const RenderOpts& o) {
  auto env = envs::make_env(o.env, parse_param_flags(o.params, "--param"));
  const std::int64_t max_steps = o.max_steps > 0 ? o.max_steps : env->spec().max_episode_steps;
  EpisodeRecording rec(*env, o.env, o.episodes, max_steps, o.fps, o.out, "--max-steps");
  auto policy = algos::make_policy(o.policy, *env);
  evaluate(*env, *policy, o.episodes, o.seed, 0, &rec.observer());
  rec.write(fmt::format("{} on {}, seed {}", o.policy, o.env, o.seed));
}

// Refuses an env without a renderer and more frames than a file may hold (ParamError).
void check_recordable(const Env& env, const std::string& env_flag, int episodes,
                      std::int64_t max_steps, const char* steps_flag) {
  const EnvSpec& spec = env.spec();
  if (!envs::has_renderer(spec.id))
    throw ParamError(fmt::format("--env {}: no renderer yet for {} (rendered: {})", env_flag,
                                 spec.id, fmt::join(envs::rendered_env_ids(), ", ")));
  // frames: the reset state and one per step of every episode, bounded before anything runs
  const double frames = static_cast<double>(episodes) * static_cast<double>(max_steps + 1);
  if (frames > kMaxRenderFrames)
    throw ParamError(fmt::format(
        "--episodes {} x {} {}: up to {:.0f} frames; at most {:.0f} (docs/render.md)", episodes,
        steps_flag, max_steps, frames, kMaxRenderFrames));
}

}  // namespace

std::string episode_frames_svg(Env& env, Policy& policy, int episodes, std::uint64_t seed,
                               std::int64_t max_steps, const std::string& title,
                               std::size_t* frames) {
  check_recordable(env, env.spec().id, episodes, max_steps, "--max-steps");
  FrameWriter writer(episodes, max_steps);
  evaluate(env, policy, episodes, seed, 0, &writer);
  if (frames != nullptr) *frames = writer.ends.size();
  return animated_svg(writer, 0, title);
}

EpisodeRecording::EpisodeRecording(const Env& env, const std::string& env_flag, int episodes,
                                   std::int64_t max_steps, double fps, std::string out,
                                   const char* steps_flag)
    : fps_(fps), out_(std::move(out)), episodes_(episodes) {
  if (!(fps >= 1 && fps <= 240))  // NaN included
    throw ParamError(fmt::format("--fps {}: must be in [1, 240]", fps));
  check_render_out(out_);
  check_recordable(env, env_flag, episodes, max_steps, steps_flag);
  if (const auto format = tools::raster_format(out_))
    raster_ = std::make_unique<tools::RasterFrames>(*format, out_, fps, kRenderWidthPx,
                                                    kRenderCaptionPx);
  writer_ = std::make_unique<FrameWriter>(episodes, max_steps, raster_.get());
}

EpisodeRecording::~EpisodeRecording() = default;

EpisodeObserver& EpisodeRecording::observer() { return *writer_; }

void EpisodeRecording::write(const std::string& title, bool announce) {
  const std::string written = raster_ ? raster_->finish() : out_;
  if (!raster_) write_file_atomic(out_, animated_svg(*writer_, fps_, title));
  if (!announce) return;
  const auto n = writer_->ends.size();
  fmt::print("wrote {} ({} frames, {} episodes, {:.1f} s at {:g} fps)\n", written, n, episodes_,
             static_cast<double>(n) / fps_, fps_);
}

void add_render_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "render",
      "draw seeded episodes of a policy as one animated SVG, PNG frames or a GIF (docs/render.md)");
  auto o = std::make_shared<RenderOpts>();
  cmd->add_option("--env", o->env, "env id (every registered env has a picture)")
      ->required();
  cmd->add_option("--param", o->params, "env parameter k=v (repeatable)");
  cmd->add_option("--policy", o->policy, "built-in policy name or checkpoint file")->required();
  cmd->add_option("--seed", o->seed, "seed, as dprl eval --seed (default 0)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--episodes", o->episodes, "episodes (default 1)")->check(CLI::Range(1, 100000));
  cmd->add_option("--max-steps", o->max_steps,
                  "steps drawn per episode at most (default: the env's time limit)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1000000000}));
  cmd->add_option("--fps", o->fps, "frames per second in [1, 240] (default 30)");
  cmd->add_option("--out", o->out,
                  "output file: F.svg (animated), F.png (one PNG per frame: F_00000.png, ...) or "
                  "F.gif (animated)")
      ->required();
  cmd->callback([o] { cmd_render(*o); });
}

}  // namespace dprl::cli
