// PNG and GIF frames of dprl render (tools/raster_frames.hpp). cairo and giflib are seen only here.
#include "tools/raster_frames.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <numbers>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/error.hpp"
#include "engine/io.hpp"

#ifdef DPRL_CAIRO
#include <cairo.h>
#endif
#ifdef DPRL_GIF
#include <gif_lib.h>
#endif

namespace dprl::tools {

namespace fs = std::filesystem;

std::optional<RasterFormat> raster_format(const std::string& out) {
  std::string ext = fs::path(out).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".png") return RasterFormat::kPng;
  if (ext == ".gif") return RasterFormat::kGif;
  return std::nullopt;
}

void check_raster_support(RasterFormat format, const std::string& out) {
#ifndef DPRL_CAIRO
  throw ParamError(fmt::format(
      "--out {}: this dprl was built without cairo, so it writes SVG only (install libcairo2-dev{} "
      "and rebuild; scripts/setup.sh does both)",
      out, format == RasterFormat::kGif ? " and libgif-dev" : ""));
#endif
#ifndef DPRL_GIF
  if (format == RasterFormat::kGif)
    throw ParamError(
        fmt::format("--out {}: this dprl was built without giflib, so it cannot write GIF (install "
                    "libgif-dev and rebuild, or write .png frames or .svg)",
                    out));
#endif
}

#ifdef DPRL_CAIRO

namespace {

struct RasterRgb {
  double r = 0, g = 0, b = 0;
};

// "#rrggbb"; nullopt for "none" (and anything else the scenes do not use)
std::optional<RasterRgb> raster_colour(const std::string& c) {
  if (c.size() != 7 || c[0] != '#') return std::nullopt;
  const unsigned long v = std::stoul(c.substr(1), nullptr, 16);
  return RasterRgb{((v >> 16) & 255) / 255.0, ((v >> 8) & 255) / 255.0, (v & 255) / 255.0};
}

// The scene on cr as envs::append_svg draws it: world x0..x0 + width onto 0..width_px, y flipped.
void raster_draw_scene(cairo_t* cr, const envs::Scene& s, double width_px) {
  const double k = width_px / s.width;
  const double top = s.height * k;
  auto px = [&](double x) { return (x - s.x0) * k; };
  auto py = [&](double y) { return top - (y - s.y0) * k; };
  auto set = [&](const RasterRgb& c) { cairo_set_source_rgb(cr, c.r, c.g, c.b); };
  if (const auto bg = raster_colour(s.background)) {
    set(*bg);
    cairo_rectangle(cr, 0, 0, width_px, s.height * k);
    cairo_fill(cr);
  }
  for (const envs::Shape& sh : s.shapes) {
    const auto& v = sh.v;
    using Kind = envs::Shape::Kind;
    if (sh.kind == Kind::kText) {
      if (const auto fill = raster_colour(sh.fill)) {
        set(*fill);
        cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
        cairo_set_font_size(cr, v[2] * k);
        cairo_move_to(cr, px(v[0]), py(v[1]));
        cairo_show_text(cr, sh.text.c_str());
        cairo_new_path(cr);
      }
      continue;
    }
    switch (sh.kind) {
      case Kind::kLine:
        cairo_move_to(cr, px(v[0]), py(v[1]));
        cairo_line_to(cr, px(v[2]), py(v[3]));
        break;
      case Kind::kPolyline:
      case Kind::kPolygon:
        for (std::size_t i = 0; i + 1 < v.size(); i += 2)
          (i == 0 ? cairo_move_to : cairo_line_to)(cr, px(v[i]), py(v[i + 1]));
        if (sh.kind == Kind::kPolygon) cairo_close_path(cr);
        break;
      case Kind::kRect:
        cairo_rectangle(cr, px(v[0]), py(v[1] + v[3]), v[2] * k, v[3] * k);
        break;
      case Kind::kCircle:
        cairo_new_sub_path(cr);
        cairo_arc(cr, px(v[0]), py(v[1]), v[2] * k, 0, 2 * std::numbers::pi);
        break;
      case Kind::kText:
        break;
    }
    // SVG paints the fill, then the stroke (a line has no fill)
    const auto fill = sh.kind == Kind::kLine ? std::nullopt : raster_colour(sh.fill);
    const auto stroke = raster_colour(sh.stroke);
    if (fill) {
      set(*fill);
      if (stroke)
        cairo_fill_preserve(cr);
      else
        cairo_fill(cr);
    }
    if (stroke) {
      set(*stroke);
      cairo_set_line_width(cr, sh.stroke_width * k);
      cairo_stroke(cr);
    }
    cairo_new_path(cr);
  }
}

#ifdef DPRL_GIF
// The palette: up to 128 colours of the first frame, most frequent first (the scenes' flat fills
// and strokes), then a 5 x 5 x 5 colour cube (levels 0, 64, 128, 191, 255), then greys and a
// 6 x 6 x 6 cube until it holds 256.
// A pixel maps to its exact colour when the palette has it, else to the nearest entry (squared
// RGB distance); the answers are cached, so each distinct colour is searched once.
class GifPalette {
 public:
  explicit GifPalette(const std::vector<std::uint32_t>& first_frame) {
    std::unordered_map<std::uint32_t, std::size_t> counts;
    for (const std::uint32_t px : first_frame) ++counts[px & 0xffffff];
    std::vector<std::pair<std::size_t, std::uint32_t>> by_count;
    for (const auto& [colour, n] : counts) by_count.emplace_back(n, colour);
    std::sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (std::size_t i = 0; i < by_count.size() && i < 128; ++i) add(by_count[i].second);
    for (int r = 0; r < 5; ++r)
      for (int g = 0; g < 5; ++g)
        for (int b = 0; b < 5; ++b) add(rgb(level(r), level(g), level(b)));
    for (int i = 1; i < 64; ++i) add(rgb(i * 4, i * 4, i * 4));
    for (int i = 0; i < 216; ++i) add(rgb(i / 36 * 51, i / 6 % 6 * 51, i % 6 * 51));
    DPRL_CHECK(colours_.size() == 256);
  }

  const std::vector<std::uint32_t>& colours() const { return colours_; }

  GifByteType index(std::uint32_t px) {
    px &= 0xffffff;
    if (const auto it = cache_.find(px); it != cache_.end()) return it->second;
    int best = 0;
    long best_d = -1;
    for (std::size_t i = 0; i < colours_.size(); ++i) {
      const long d = distance(px, colours_[i]);
      if (best_d < 0 || d < best_d) {
        best_d = d;
        best = static_cast<int>(i);
      }
    }
    return cache_[px] = static_cast<GifByteType>(best);
  }

 private:
  static int level(int i) { return i == 0 ? 0 : (i * 255 + 2) / 4; }
  static std::uint32_t rgb(int r, int g, int b) {
    return static_cast<std::uint32_t>(r) << 16 | static_cast<std::uint32_t>(g) << 8 |
           static_cast<std::uint32_t>(b);
  }
  static long distance(std::uint32_t a, std::uint32_t b) {
    long d = 0;
    for (int shift = 0; shift <= 16; shift += 8) {
      const long c = static_cast<long>((a >> shift) & 255) - static_cast<long>((b >> shift) & 255);
      d += c * c;
    }
    return d;
  }
  void add(std::uint32_t colour) {
    if (colours_.size() == 256 || cache_.count(colour)) return;
    cache_[colour] = static_cast<GifByteType>(colours_.size());
    colours_.push_back(colour);
  }

  std::vector<std::uint32_t> colours_;
  std::unordered_map<std::uint32_t, GifByteType> cache_;
};
#endif

}  // namespace

struct RasterFrames::Impl {
  RasterFormat format;
  std::string out;
  double fps;
  double width_px;
  double caption_px;
  int width = 0, height = 0;  // canvas, fixed by the first frame
  cairo_surface_t* surface = nullptr;
  std::string first_png, last_png;
#ifdef DPRL_GIF
  GifFileType* gif = nullptr;
  std::string gif_tmp;
  std::vector<GifByteType> line;
  std::optional<GifPalette> palette;
#endif

  ~Impl() {
    if (surface != nullptr) cairo_surface_destroy(surface);
#ifdef DPRL_GIF
    if (gif != nullptr) {
      int err = 0;
      EGifCloseFile(gif, &err);
      std::error_code ec;
      fs::remove(gif_tmp, ec);
    }
#endif
  }

  std::string png_name(std::size_t frame) const {
    const fs::path p(out);
    return (p.parent_path() / fmt::format("{}_{:05d}.png", p.stem().string(), frame)).string();
  }

#ifdef DPRL_GIF
  void gif_fail(const char* what, int code) const {
    throw DataError(
        fmt::format("cannot write {}: {} failed ({})", out, what, GifErrorString(code)));
  }

  // the pixels of the surface, row by row (0x00RRGGBB)
  std::vector<std::uint32_t> pixels() const {
    cairo_surface_flush(surface);
    const unsigned char* data = cairo_image_surface_get_data(surface);
    const int stride = cairo_image_surface_get_stride(surface);
    std::vector<std::uint32_t> out(static_cast<std::size_t>(width) *
                                   static_cast<std::size_t>(height));
    for (int y = 0; y < height; ++y)
      std::memcpy(out.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(width),
                  data + static_cast<std::ptrdiff_t>(y) * stride,
                  static_cast<std::size_t>(width) * sizeof(std::uint32_t));
    return out;
  }

  // opened at the first frame, whose colours make the palette
  void open_gif(const std::vector<std::uint32_t>& first) {
    gif_tmp = fmt::format("{}.tmp.{}", out, ::getpid());
    const int fd = ::open(gif_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) throw DataError(fmt::format("cannot write {}: {}", out, std::strerror(errno)));
    int err = 0;
    gif = EGifOpenFileHandle(fd, &err);
    if (gif == nullptr) {
      ::close(fd);
      gif_fail("opening the file", err);
    }
    EGifSetGifVersion(gif, true);
    palette.emplace(first);
    GifColorType colours[256];
    for (std::size_t i = 0; i < 256; ++i) {
      const std::uint32_t c = palette->colours()[i];
      colours[i] = {static_cast<GifByteType>(c >> 16), static_cast<GifByteType>(c >> 8),
                    static_cast<GifByteType>(c)};
    }
    ColorMapObject* map = GifMakeMapObject(256, colours);
    const int ok = EGifPutScreenDesc(gif, width, height, 8, 0, map);
    GifFreeMapObject(map);
    if (ok == GIF_ERROR) gif_fail("the screen descriptor", gif->Error);
    // loop for ever (the NETSCAPE2.0 application extension, count 0)
    const unsigned char loop[3] = {1, 0, 0};
    if (EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
        EGifPutExtensionBlock(gif, 11, "NETSCAPE2.0") == GIF_ERROR ||
        EGifPutExtensionBlock(gif, 3, loop) == GIF_ERROR ||
        EGifPutExtensionTrailer(gif) == GIF_ERROR)
      gif_fail("the loop extension", gif->Error);
    line.resize(static_cast<std::size_t>(width));
  }

  void put_gif_frame(std::size_t frame) {
    const std::vector<std::uint32_t> px = pixels();
    if (gif == nullptr) open_gif(px);
    GraphicsControlBlock gcb{};
    gcb.DisposalMode = DISPOSE_DO_NOT;
    gcb.TransparentColor = NO_TRANSPARENT_COLOR;
    const auto at = [&](std::size_t i) {
      return static_cast<int>(std::lround(100.0 * static_cast<double>(i) / fps));
    };
    gcb.DelayTime = std::max(2, at(frame + 1) - at(frame));
    GifByteType ext[4];
    const std::size_t n = EGifGCBToExtension(&gcb, ext);
    if (EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, static_cast<int>(n), ext) == GIF_ERROR ||
        EGifPutImageDesc(gif, 0, 0, width, height, false, nullptr) == GIF_ERROR)
      gif_fail("a frame header", gif->Error);
    for (int y = 0; y < height; ++y) {
      const std::uint32_t* row =
          px.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(width);
      // runs of one colour are common: remember the last pixel's index
      std::uint32_t last = ~row[0];
      GifByteType idx = 0;
      for (int x = 0; x < width; ++x) {
        if (row[x] != last) {
          last = row[x];
          idx = palette->index(last);
        }
        line[static_cast<std::size_t>(x)] = idx;
      }
      if (EGifPutLine(gif, line.data(), width) == GIF_ERROR) gif_fail("a frame row", gif->Error);
    }
  }
#endif
};

RasterFrames::RasterFrames(RasterFormat format, std::string out, double fps, double width_px,
                           double caption_px)
    : impl_(std::make_unique<Impl>()) {
  check_raster_support(format, out);
  impl_->format = format;
  impl_->out = std::move(out);
  impl_->fps = fps;
  impl_->width_px = width_px;
  impl_->caption_px = caption_px;
}

RasterFrames::~RasterFrames() = default;

void RasterFrames::add(const envs::Scene& scene, const std::string& caption) {
  Impl& m = *impl_;
  const double scene_px = envs::svg_height(scene, m.width_px);
  if (m.surface == nullptr) {
    m.width = static_cast<int>(std::ceil(m.width_px));
    m.height = static_cast<int>(std::ceil(scene_px + m.caption_px));
    m.surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, m.width, m.height);
    if (cairo_surface_status(m.surface) != CAIRO_STATUS_SUCCESS)
      throw DataError(fmt::format("cannot write {}: no {} x {} canvas", m.out, m.width, m.height));
  }
  cairo_t* cr = cairo_create(m.surface);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  raster_draw_scene(cr, scene, m.width_px);
  // the caption strip, as the SVG's: white, 24 px, 14 px sans-serif text 17 px below its top
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_rectangle(cr, 0, scene_px, m.width_px, m.caption_px);
  cairo_fill(cr);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, 14);
  cairo_move_to(cr, 8, scene_px + 17);
  cairo_show_text(cr, caption.c_str());
  const cairo_status_t status = cairo_status(cr);
  cairo_destroy(cr);
  if (status != CAIRO_STATUS_SUCCESS)
    throw DataError(fmt::format("cannot draw {}: {}", m.out, cairo_status_to_string(status)));
  if (m.format == RasterFormat::kPng) {
    const std::string name = m.png_name(frames_);
    const std::string tmp = fmt::format("{}.tmp.{}", name, ::getpid());
    if (const cairo_status_t s = cairo_surface_write_to_png(m.surface, tmp.c_str());
        s != CAIRO_STATUS_SUCCESS) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw DataError(fmt::format("cannot write {}: {}", name, cairo_status_to_string(s)));
    }
    std::error_code ec;
    fs::rename(tmp, name, ec);
    if (ec) throw DataError(fmt::format("cannot write {}: {}", name, ec.message()));
    if (frames_ == 0) m.first_png = name;
    m.last_png = name;
  }
#ifdef DPRL_GIF
  if (m.format == RasterFormat::kGif) m.put_gif_frame(frames_);
#endif
  ++frames_;
}

std::string RasterFrames::finish() {
  Impl& m = *impl_;
  if (m.format == RasterFormat::kPng)
    return frames_ == 1 ? m.first_png : fmt::format("{} .. {}", m.first_png, m.last_png);
#ifdef DPRL_GIF
  int err = 0;
  const int ok = EGifCloseFile(m.gif, &err);
  m.gif = nullptr;
  std::error_code ec;
  if (ok == GIF_ERROR) {
    fs::remove(m.gif_tmp, ec);
    throw DataError(fmt::format("cannot write {}: {}", m.out, GifErrorString(err)));
  }
  fs::rename(m.gif_tmp, m.out, ec);
  if (ec) {
    fs::remove(m.gif_tmp, ec);
    throw DataError(fmt::format("cannot write {}: {}", m.out, ec.message()));
  }
#endif
  return m.out;
}

#else  // no cairo: the constructor refuses (check_raster_support throws)

struct RasterFrames::Impl {};

RasterFrames::RasterFrames(RasterFormat format, std::string out, double, double, double) {
  check_raster_support(format, out);
}
RasterFrames::~RasterFrames() = default;
void RasterFrames::add(const envs::Scene&, const std::string&) {}
std::string RasterFrames::finish() { return {}; }

#endif

}  // namespace dprl::tools
