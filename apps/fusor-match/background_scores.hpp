#pragma once
// pyTME's background normalisation (postprocess.py --background-file): the scores of other match
// results over the same target, a phase-scrambled template's (`template --scramble-phases`) or
// another template's, taken per voxel as the largest of them and 0, subtracted from the scores,
// and their mean added back. `peaks --background` and `stats --background` read them.
#include <string>
#include <vector>

#include <fusor/fusor.hpp>

#include "output.hpp"
#include "result_folder.hpp"

namespace fusor_match {

/// `scores` less the backgrounds of the match results in `dirs` (their scores.mrc, checked against
/// their metadata.json, each of the scores' shape), plus the background's mean, which goes to
/// *mean; `who` names the subcommand in messages.
inline fusor::array<float> subtract_backgrounds(const fusor::array<float>& scores, const std::vector<std::string>& dirs,
                                                const char* who, double* mean) {
  fusor::array<float> background = fusor::zeros<float>(scores.shape());
  for (const std::string& d : dirs) {
    const fs::path dir(d);
    for (const char* f : {"metadata.json", "scores.mrc"}) require_file(dir / f, "background match output");
    const nlohmann::json meta = read_metadata(dir);
    check_result_parts(dir, meta, {"scores.mrc"});
    const fusor::array<float> b = fusor::match::read_mrc(dir / "scores.mrc").data;
    if (b.shape() != scores.shape())
      throw fusor::shape_error(std::string(who) + ": the background " + d + " has scores of shape " + fusor::to_string(b.shape()) +
                               "; expected the scores' " + fusor::to_string(scores.shape()) + " (a match over the same target)");
    // pyTME's max over the backgrounds from 0 (a NaN of an unscored voxel leaves it)
    for (fusor::index_t i = 0; i < b.size(); ++i)
      if (b.data()[i] > background.data()[i]) background.data()[i] = b.data()[i];
  }
  return fusor::match::subtract_noise_scores(scores, background, mean);
}

}  // namespace fusor_match
