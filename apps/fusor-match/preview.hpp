#pragma once
// `fusor-match preview`: a PNG to look at instead of reading numbers. The top row shows three
// orthogonal slices of the target (XY at z, XZ at y, YZ at x) through one voxel, the bottom row
// the same slices of the score map; the peaks of a peaks table within a few voxels of a slice are
// circled in red on both rows. Written with libpng, 8-bit RGB, unfiltered rows, under a temporary
// name renamed when complete.
#include <png.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <fusor/fusor.hpp>

#include "output.hpp"
#include "result_folder.hpp"

namespace fusor_match {

namespace match = fusor::match;

struct preview_args {
  std::string input, output, peaks;
  std::vector<long long> at;  // x y z; empty: the best peak, or the highest score
  int width = 900;
  bool quiet = false;
};

/// An RGB image, rows top to bottom.
struct rgb_image {
  int w = 0, h = 0;
  std::vector<unsigned char> px;
  rgb_image(int width, int height) : w(width), h(height), px(std::size_t(width) * std::size_t(height) * 3, 255) {}
  void set(int x, int y, unsigned char r, unsigned char g, unsigned char b) {
    if (x < 0 || y < 0 || x >= w || y >= h) return;
    unsigned char* p = &px[(std::size_t(y) * std::size_t(w) + std::size_t(x)) * 3];
    p[0] = r;
    p[1] = g;
    p[2] = b;
  }
};

inline void write_png(const fs::path& path, const rgb_image& img) {
  const fs::path tmp = temporary_beside(path);
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw fusor::io_error("preview: cannot write " + path.string());
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(f);
    std::error_code ignore;
    fs::remove(tmp, ignore);
    throw fusor::io_error("preview: libpng failed writing " + path.string());
  }
  png_init_io(png, f);
  png_set_IHDR(png, info, png_uint_32(img.w), png_uint_32(img.h), 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
  png_write_info(png, info);
  for (int y = 0; y < img.h; ++y)
    png_write_row(png, const_cast<png_bytep>(&img.px[std::size_t(y) * std::size_t(img.w) * 3]));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  if (std::fclose(f) != 0) throw fusor::io_error("preview: cannot write " + path.string());
  fs::rename(tmp, path);
}

/// One slice of a volume [x, y, z] as gray levels, the axes (u, v) of the panel and the fixed
/// coordinate: plane 0 is XY at z, 1 is XZ at y, 2 is YZ at x.
struct slice {
  int nu = 0, nv = 0;
  std::vector<float> v;
};
inline slice cut(const fusor::array<float>& vol, int plane, const std::array<fusor::index_t, 3>& at) {
  const auto s = vol.shape();
  const int u = plane == 2 ? 1 : 0, w = plane == 0 ? 1 : 2;  // the panel's horizontal and vertical axes
  slice out{int(s[u]), int(s[w]), {}};
  out.v.resize(std::size_t(out.nu) * std::size_t(out.nv));
  for (int j = 0; j < out.nv; ++j)
    for (int i = 0; i < out.nu; ++i) {
      std::array<fusor::index_t, 3> p = at;
      p[std::size_t(u)] = i;
      p[std::size_t(w)] = j;
      out.v[std::size_t(j) * std::size_t(out.nu) + std::size_t(i)] = vol.data()[(p[0] * s[1] + p[1]) * s[2] + p[2]];
    }
  return out;
}

inline int run_preview(const preview_args& a) {
  using fusor::index_t;
  const fs::path dir(a.input);
  for (const char* f : {"metadata.json", "scores.mrc"}) require_file(dir / f, "match output");
  const std::string peaks_path = !a.peaks.empty() ? a.peaks : (dir / "peaks.tsv").string();
  if (!a.peaks.empty()) require_file(a.peaks, "peaks table");
  if (!a.at.empty() && a.at.size() != 3)
    throw fusor::value_error("preview: --at expects 3 voxel coordinates (x y z), got " + std::to_string(a.at.size()));
  if (a.width < 64 || a.width > 20000)
    throw fusor::value_error("preview: --width expects 64 to 20000 pixels, got " + std::to_string(a.width));
  const fs::path out = a.output.empty() ? dir / "preview.png" : fs::path(a.output);
  std::error_code ec;
  std::optional<folder_lock> lock;  // writing into the result folder: no match swaps it meanwhile
  if (fs::equivalent(fs::absolute(out).parent_path(), fs::absolute(dir), ec)) lock.emplace(dir, "writing a preview");
  const nlohmann::json meta = read_metadata(dir);
  const fs::path meta_file = dir / metadata_name;
  check_result_parts(dir, meta, {"scores.mrc"});
  const auto score = match::read_mrc(dir / "scores.mrc").data;
  const std::string target_path = metadata_field<std::string>(meta, {"target"}, meta_file);
  require_file(target_path, "target (from metadata.json)");
  const auto target = match::read_mrc(target_path).data;
  const auto n = score.shape();
  if (target.shape() != n)
    throw fusor::shape_error("preview: the target " + target_path + " " + fusor::to_string(target.shape()) +
                             " is not the score map's shape " + fusor::to_string(n));
  // the peaks table (x y z first), when there is one
  std::vector<std::array<index_t, 3>> peaks;
  {
    std::error_code ec;
    if (fs::is_regular_file(peaks_path, ec)) {
      std::istringstream in(read_text(peaks_path));
      std::string line;
      std::getline(in, line);
      double x, y, z;  // (half voxels with pyTME's rotation centre: the nearest voxel is drawn)
      while (std::getline(in, line))
        if (std::istringstream(line) >> x >> y >> z && std::isfinite(x) && std::isfinite(y) && std::isfinite(z))
          peaks.push_back({std::clamp<index_t>(index_t(std::lround(x)), 0, n[0] - 1),
                           std::clamp<index_t>(index_t(std::lround(y)), 0, n[1] - 1),
                           std::clamp<index_t>(index_t(std::lround(z)), 0, n[2] - 1)});
    }
  }
  std::array<index_t, 3> at{};
  if (!a.at.empty()) {
    for (int k = 0; k < 3; ++k) {
      if (a.at[std::size_t(k)] < 0 || a.at[std::size_t(k)] >= n[k])
        throw fusor::value_error("preview: --at " + std::string(1, "xyz"[k]) + " = " + std::to_string(a.at[std::size_t(k)]) +
                                 " is outside the map's 0 to " + std::to_string(n[k] - 1));
      at[std::size_t(k)] = index_t(a.at[std::size_t(k)]);
    }
  } else if (!peaks.empty()) {
    at = peaks.front();
  } else {  // the highest score
    const index_t best = index_t(fusor::argmax(fusor::where(fusor::isnan(score), -INFINITY, score)));
    at = {best / (n[1] * n[2]), (best / n[2]) % n[1], best % n[2]};
  }

  // layout: three panels per row, one integer zoom so the image is about --width wide
  const int gap = 6;
  const int zoom = std::max(1, (a.width - 2 * gap) / int(n[0] + n[0] + n[1]));
  const int row_h = zoom * int(std::max(n[1], n[2]));
  rgb_image img(zoom * int(n[0] + n[0] + n[1]) + 2 * gap, 2 * row_h + gap);
  const double mark = std::max(2.0, double(metadata_field<std::array<index_t, 3>>(meta, {"template_shape"}, meta_file)[0]) / 2.0);
  for (int row = 0; row < 2; ++row) {
    const auto& vol = row == 0 ? target : score;
    // gray levels: the target from its 1st to 99th percentile, the scores from their 0 (or the
    // minimum) to their maximum
    std::vector<float> all;
    all.reserve(std::size_t(vol.size()));
    for (index_t i = 0; i < vol.size(); ++i)
      if (!std::isnan(vol.data()[i])) all.push_back(vol.data()[i]);
    float lo = 0, hi = 1;
    if (!all.empty()) {
      std::sort(all.begin(), all.end());
      lo = row == 0 ? all[all.size() / 100] : std::max(0.0f, all.front());
      hi = row == 0 ? all[all.size() - 1 - all.size() / 100] : all.back();
      if (!(hi > lo)) hi = lo + 1;
    }
    int x0 = 0;
    for (int plane = 0; plane < 3; ++plane) {
      const slice s = cut(vol, plane, at);
      for (int j = 0; j < s.nv; ++j)
        for (int i = 0; i < s.nu; ++i) {
          const float v = s.v[std::size_t(j) * std::size_t(s.nu) + std::size_t(i)];
          const unsigned char g =
              std::isnan(v) ? 0 : (unsigned char)std::lround(255.0 * std::clamp((double(v) - lo) / (hi - lo), 0.0, 1.0));
          for (int dy = 0; dy < zoom; ++dy)
            for (int dx = 0; dx < zoom; ++dx) img.set(x0 + i * zoom + dx, row * (row_h + gap) + j * zoom + dy, g, g, g);
        }
      // the peaks within a few voxels of this slice: a red circle of the template's radius
      const int u = plane == 2 ? 1 : 0, w = plane == 0 ? 1 : 2, fixed = 2 - plane;
      for (const auto& p : peaks) {
        if (std::abs(double(p[std::size_t(fixed)] - at[std::size_t(fixed)])) > mark / 2) continue;
        const double cx = x0 + (double(p[std::size_t(u)]) + 0.5) * zoom,
                     cy = row * (row_h + gap) + (double(p[std::size_t(w)]) + 0.5) * zoom, r = mark * zoom;
        for (int t = 0; t < 720; ++t) {
          const double ang = t * 3.141592653589793 / 360.0;
          for (int thick = 0; thick < std::max(1, zoom / 2); ++thick)
            img.set(int(std::lround(cx + (r + thick) * std::cos(ang))), int(std::lround(cy + (r + thick) * std::sin(ang))),
                    255, 0, 0);
        }
      }
      x0 += s.nu * zoom + gap;
    }
  }
  if (out.has_parent_path()) prepare_folder(out.parent_path());
  write_png(out, img);
  if (!a.quiet)
    std::printf("preview: slices through (%lld, %lld, %lld) of the target (top) and the scores (bottom), %zu peak(s) "
                "marked, %d x %d pixels -> %s\n",
                (long long)at[0], (long long)at[1], (long long)at[2], peaks.size(), img.w, img.h, out.string().c_str());
  return 0;
}

}  // namespace fusor_match
