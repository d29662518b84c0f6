// dprl render's frames as pixels (docs/render.md, "PNG and GIF"): `--out F.png` writes one PNG
// file per frame, F_00000.png, F_00001.png, ...; `--out F.gif` writes one animated GIF that loops
// for ever. The frames are the pictures of the SVG output (envs/render.hpp scenes and the caption
// strip below them) drawn with cairo (libcairo2-dev): the same width, the same world-to-pixel
// mapping, antialiased. A GIF has one 256-colour palette for all frames, so colours do not
// flicker: the first frame's 128 most frequent colours exactly, then colour cubes and greys; a
// pixel takes its exact colour when the palette has it, else the nearest entry; frame i is
// shown from round(100 i / fps) to round(100 (i + 1) / fps) hundredths of a second, at least 2 (GIF
// delays are in hundredths and viewers slow down shorter ones).
//
// Both libraries are optional at configure time (DPRL_RASTER: AUTO, ON, OFF; cairo for either
// format, giflib for GIF). A build without them refuses such an --out with a ParamError saying
// what to install, before anything runs.
//
// Files are written atomically: each PNG through a temporary name renamed into place as its frame
// is drawn, the GIF into "<F>.tmp.<pid>" renamed by finish() (removed when the writer is destroyed
// without finish(), e.g. after an error).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "envs/render.hpp"

namespace dprl::tools {

enum class RasterFormat { kPng, kGif };

// The format named by out's extension (.png or .gif, any case), nullopt for any other.
std::optional<RasterFormat> raster_format(const std::string& out);
// ParamError naming --out when this build cannot write format.
void check_raster_support(RasterFormat format, const std::string& out);

class RasterFrames {
 public:
  // width_px: canvas width; caption_px: height of the caption strip below each scene. fps in
  // [1, 240] (checked by the caller).
  RasterFrames(RasterFormat format, std::string out, double fps, double width_px,
               double caption_px);
  ~RasterFrames();
  RasterFrames(const RasterFrames&) = delete;
  RasterFrames& operator=(const RasterFrames&) = delete;

  // Draws one frame: the scene, and the caption text in the strip below it. The first frame fixes
  // the canvas height (a later scene of another aspect ratio is drawn from the top, cut or padded).
  void add(const envs::Scene& scene, const std::string& caption);
  // Ends the output (the GIF is closed and renamed into place); returns what was written, for the
  // command's line ("F.gif" or "F_00000.png .. F_00120.png"). DataError on a failed write.
  std::string finish();
  std::size_t frames() const { return frames_; }

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  std::size_t frames_ = 0;
};

}  // namespace dprl::tools
