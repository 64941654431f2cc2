#pragma once
// `fusor-match stats`: the score histogram of a match output, the Gaussian its noise follows
// (match::fit_noise), the false positives it expects above each threshold beside the voxels
// observed there, the cut-off for a number of false positives, and the picture: an SVG of the
// histogram (log counts), the fit, the bins it was fitted over and the cut-off. With --tophat the
// same for the score map's white top-hat (pytom-match-pick's tophat filter). Written as plain SVG
// text: no plotting library is needed for bars, a curve and a line.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <fusor/fusor.hpp>

#include "background_scores.hpp"
#include "numbers.hpp"
#include "output.hpp"
#include "result_folder.hpp"

namespace fusor_match {

namespace match = fusor::match;

struct stats_args {
  std::string input, output, target_mask;
  std::vector<std::string> backgrounds;  // --background: match results whose scores are subtracted (pyTME's)
  int bins = 200;
  double false_positives = 1;
  bool tophat = false;
  int connectivity = 1;
  bool quiet = false;
};

/// The histogram, its fit and the cut-off as an SVG picture (log counts up, scores across).
inline std::string histogram_svg(const match::histogram& h, const match::noise_fit& f, double cutoff, const std::string& title,
                                 const std::string& xlabel) {
  const double W = 800, H = 480, left = 70, right = 20, top = 40, bottom = 60;
  const double pw = W - left - right, ph = H - top - bottom;
  double peak = 1;
  for (double c : h.count) peak = std::max(peak, c);
  const double ymax = std::log10(peak) + 0.3, ymin = -0.3;  // counts from 0.5 up
  const double x0 = h.low, x1 = h.low + h.width * double(h.count.size());
  const auto X = [&](double x) { return left + (x - x0) / (x1 - x0) * pw; };
  const auto Y = [&](double count) {
    const double l = std::log10(std::max(count, std::pow(10.0, ymin)));
    return top + (1 - (l - ymin) / (ymax - ymin)) * ph;
  };
  char b[512];
  std::string s;
  std::snprintf(b, sizeof b,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
                "viewBox=\"0 0 %g %g\" font-family=\"sans-serif\" font-size=\"13\">\n<rect width=\"%g\" height=\"%g\" fill=\"white\"/>\n",
                W, H, W, H, W, H);
  s += b;
  s += "<title>" + title + "</title>\n";
  std::snprintf(b, sizeof b, "<text x=\"%g\" y=\"24\" font-size=\"15\">%s</text>\n", left, title.c_str());
  s += b;
  // the bins the fit used
  std::snprintf(b, sizeof b, "<rect id=\"fit-region\" x=\"%.2f\" y=\"%g\" width=\"%.2f\" height=\"%g\" fill=\"#dddddd\"/>\n",
                X(h.low + h.width * double(f.first)), top, X(h.low + h.width * double(f.last + 1)) - X(h.low + h.width * double(f.first)), ph);
  s += b;
  s += "<g id=\"bars\" fill=\"#4477aa\">\n";
  for (std::size_t i = 0; i < h.count.size(); ++i) {
    if (h.count[i] <= 0) continue;
    const double xa = X(h.low + h.width * double(i)), xb = X(h.low + h.width * double(i + 1));
    std::snprintf(b, sizeof b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" data-count=\"%.0f\"/>\n", xa, Y(h.count[i]),
                  std::max(0.5, xb - xa), top + ph - Y(h.count[i]), h.count[i]);
    s += b;
  }
  s += "</g>\n<polyline id=\"fit\" fill=\"none\" stroke=\"#ee7733\" stroke-width=\"2\" points=\"";
  for (int k = 0; k <= 400; ++k) {
    const double x = x0 + (x1 - x0) * k / 400.0, d = f.density(x);
    if (d < 0.5) continue;
    std::snprintf(b, sizeof b, "%.2f,%.2f ", X(x), Y(d));
    s += b;
  }
  s += "\"/>\n";
  if (cutoff >= x0 && cutoff <= x1) {
    std::snprintf(b, sizeof b,
                  "<line id=\"cutoff\" x1=\"%.2f\" y1=\"%g\" x2=\"%.2f\" y2=\"%g\" stroke=\"#333333\" stroke-dasharray=\"6,4\" "
                  "data-score=\"%.6g\"/>\n<text x=\"%.2f\" y=\"%g\">cut-off %.4g</text>\n",
                  X(cutoff), top, X(cutoff), top + ph, cutoff, X(cutoff) + 4, top + 14, cutoff);
    s += b;
  }
  // axes, ticks every power of ten up and at five scores across
  std::snprintf(b, sizeof b, "<g stroke=\"black\"><line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\"/><line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\"/></g>\n",
                left, top + ph, left + pw, top + ph, left, top, left, top + ph);
  s += b;
  for (int e = 0; e <= int(ymax); ++e) {
    std::snprintf(b, sizeof b, "<text x=\"%g\" y=\"%.2f\" text-anchor=\"end\">1e%d</text>\n", left - 6, Y(std::pow(10.0, e)) + 4, e);
    s += b;
  }
  for (int k = 0; k <= 4; ++k) {
    const double x = x0 + (x1 - x0) * k / 4;
    std::snprintf(b, sizeof b, "<text x=\"%.2f\" y=\"%g\" text-anchor=\"middle\">%.3g</text>\n", X(x), top + ph + 18, x);
    s += b;
  }
  std::snprintf(b, sizeof b, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%s</text>\n", left + pw / 2, H - 14, xlabel.c_str());
  s += b;
  std::snprintf(b, sizeof b, "<text x=\"18\" y=\"%g\" transform=\"rotate(-90 18 %g)\" text-anchor=\"middle\">voxels per bin</text>\n",
                top + ph / 2, top + ph / 2);
  s += b;
  s += "</svg>\n";
  return s;
}

/// The white top-hat of a score map and the noise fitted to its histogram over the voxels where it
/// is above 0 and `mask` (when given) is above 0: most voxels are no local peak, and their top-hat
/// is exactly 0 (pytom-match-pick drops its first bins for the same reason).
struct tophat_fit {
  fusor::array<float> top;
  match::histogram histogram;
  match::noise_fit noise;
};

inline tophat_fit fit_tophat(const fusor::array<float>& scores, int connectivity, int bins, const fusor::array<float>* mask) {
  tophat_fit t;
  t.top = match::white_tophat(scores, connectivity);
  fusor::array<float> peaked(t.top.shape());
  for (fusor::index_t q = 0; q < t.top.size(); ++q)
    peaked.data()[q] = t.top.data()[q] > 0 && (!mask || mask->data()[q] > 0) ? 1.0f : 0.0f;
  t.histogram = match::score_histogram(t.top, bins, &peaked);
  t.noise = match::fit_noise(t.histogram);
  return t;
}

inline int run_stats(const stats_args& a) {
  const fs::path dir(a.input);
  for (const char* f : {"metadata.json", "scores.mrc"}) require_file(dir / f, "match output");
  if (!a.target_mask.empty()) require_file(a.target_mask, "target mask");
  if (!(a.false_positives > 0)) throw fusor::value_error("stats: --false-positives expects a number above 0");
  const fs::path base = a.output.empty() ? dir / "stats" : fs::path(a.output);
  std::error_code ec;
  std::optional<folder_lock> lock;
  if (fs::equivalent(fs::absolute(base).parent_path(), fs::absolute(dir), ec)) lock.emplace(dir, "writing statistics");
  const nlohmann::json meta = read_metadata(dir);
  check_result_parts(dir, meta, {"scores.mrc"});
  fusor::array<float> map = match::read_mrc(dir / "scores.mrc").data;
  double background_mean = 0;
  if (!a.backgrounds.empty()) map = subtract_backgrounds(map, a.backgrounds, "stats", &background_mean);
  std::optional<fusor::array<float>> mask;
  if (!a.target_mask.empty()) {
    mask = match::read_mrc(a.target_mask).data;
    if (mask->shape() != map.shape())
      throw fusor::shape_error("stats: the target mask " + a.target_mask + " " + fusor::to_string(mask->shape()) +
                               " is not the score map's shape " + fusor::to_string(map.shape()));
  }
  std::optional<tophat_fit> top;
  if (a.tophat) top = fit_tophat(map, a.connectivity, a.bins, mask ? &*mask : nullptr);
  const match::histogram h = top ? top->histogram : match::score_histogram(map, a.bins, mask ? &*mask : nullptr);
  const match::noise_fit f = top ? top->noise : match::fit_noise(h);
  const double cutoff = match::noise_cutoff(f, a.false_positives);
  // the table: per bin edge, the noise the fit expects above it and the voxels observed above it
  std::string tsv = "threshold\texpected_false_positives\tobserved_above\testimated_true_above\n";
  double above = h.total();
  char line[256];
  for (std::size_t i = 0; i < h.count.size(); ++i) {
    const double t = h.low + h.width * double(i);
    const double fp = match::expected_false_positives(f, t);
    std::snprintf(line, sizeof line, "%.6g\t%.6g\t%.0f\t%.6g\n", t, fp, above, std::max(0.0, above - fp));
    tsv += line;
    above -= h.count[i];
  }
  const std::string what = std::string(a.tophat ? "white top-hat of the scores" : "scores") +
                           (a.backgrounds.empty() ? "" : " less the background");
  const std::string title = fs::path(metadata_field<std::string>(meta, {"target"}, dir / metadata_name)).filename().string() + ": " +
                            what + ", noise fit and the cut-off for " + short_number(a.false_positives) + " false positive(s)";
  if (base.has_parent_path()) prepare_folder(base.parent_path());
  write_text(base.string() + ".tsv", tsv);
  write_text(base.string() + ".svg", histogram_svg(h, f, cutoff, title, what));
  nlohmann::json j = {{"values", a.tophat ? "white_tophat" : "scores"},
                      {"connectivity", a.tophat ? nlohmann::json(a.connectivity) : nlohmann::json(nullptr)},
                      {"bins", a.bins},
                      {"noise", {{"mean", f.mean}, {"sigma", f.sigma}, {"samples", f.samples}, {"fit_bins", {f.first, f.last}}}},
                      {"false_positives", a.false_positives},
                      {"cutoff", cutoff},
                      {"backgrounds", a.backgrounds.empty() ? nlohmann::json(nullptr)
                                                            : nlohmann::json{{"results", a.backgrounds}, {"mean", background_mean}}},
                      {"search_samples", meta.contains("statistics") ? meta["statistics"]["count"] : nlohmann::json(nullptr)}};
  write_text(base.string() + ".json", j.dump(2) + "\n");
  if (!a.quiet) {
    std::printf("stats: %s of %s: noise mean %.5g, sigma %.5g, %.4g samples (fitted over bins %zu to %zu of %d); "
                "cut-off %.5g for %g false positive(s) -> %s.{svg,tsv,json}\n",
                what.c_str(), dir.string().c_str(), f.mean, f.sigma, f.samples, f.first, f.last, a.bins, cutoff, a.false_positives,
                base.string().c_str());
  }
  return 0;
}

}  // namespace fusor_match
