// fusor-match: template matching from the command line. Subcommands:
//   simulate  write a planted test problem (target, template, mask, truth table)
//   match     score every rotation of a template against a target (MRC in, an output folder out)
//   peaks     call peaks on a match output and write TSV and RELION 5 STAR
//   preview   draw slices of the target and the score map, with the peaks marked (PNG)
//   stats     the score histogram's noise fit: false positives per threshold, the cut-off, an SVG
//   merge-stars  several tomograms' peaks.star as one particle table
//   template  a template MRC from an atomic model (PDB, mmCIF) or a map, at the tomogram's voxel size
//   mask      a mask MRC: sphere, ellipsoid, cylinder, or tight around a template
// Every subcommand has --help. Errors name the bad option or file and what was expected; they
// are found before any work starts. Ctrl-C stops a scan between rotations and writes nothing.
// Under mpirun the rotations are split across the processes and rank 0 writes the merged maps.
// Built as fusor-match-cuda (main_cuda.cu, FUSOR_MATCH_CUDA), `match` scans on the cuda backend.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "mask_run.hpp"
#include "match_run.hpp"
#include "merge_stars_run.hpp"
#include "numbers.hpp"
#include "peaks_run.hpp"
#include "preview.hpp"
#include "simulate.hpp"
#include "stats_run.hpp"
#include "template_run.hpp"

namespace fusor_match {
#if defined(FUSOR_MATCH_CUDA)
using scan_backend = fusor::cuda;
constexpr const char* program_name = "fusor-match-cuda";
#else
using scan_backend = fusor::cpu;
constexpr const char* program_name = "fusor-match";
#endif
}  // namespace fusor_match

int main(int argc, char** argv) {
  using namespace fusor_match;
  CLI::App app{std::string(program_name) + ": FFT template matching of cryo-EM volumes (fusor " FUSOR_MATCH_VERSION
               ", " + fusor::backend_traits<scan_backend>::name + " backend)",
               program_name};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(program_name) + " " + FUSOR_MATCH_VERSION);

  simulate_args sa;
  auto* sim = app.add_subcommand("simulate", "Write a planted test problem: target.mrc, template.mrc, mask.mrc, truth.tsv");
  sim->add_option("-o,--output", sa.output, "Folder to write into")->required();
  sim->add_option("--size", sa.size, "Target size in voxels (x y z)")->expected(3)->check(whole_number(1, 4096))->capture_default_str();
  sim->add_option("--template-size", sa.template_size, "Template edge in voxels")->check(whole_number(5, 255))->capture_default_str();
  sim->add_option("--copies", sa.copies, "Copies of the template planted")->check(whole_number(0, 100000))->capture_default_str();
  sim->add_option("--angular-step", sa.angular_step, "The copies' rotations come from the uniform set of this step (degrees)")
      ->check(finite_number(1.0, 180.0))->capture_default_str();
  sim->add_option("--noise", sa.noise, "Standard deviation of the Gaussian noise")->check(finite_number(0, 1e30))->capture_default_str();
  sim->add_option("--voxel-size", sa.voxel_size, "Voxel size in Å")->check(finite_number(0, 1e6, true))->capture_default_str();
  sim->add_option("--seed", sa.seed, "Random seed")->capture_default_str();
  sim->add_flag("--tilt-series", sa.tilt_series,
                "The target is a tomogram reconstructed from a simulated tilt series (projections, each tilt's CTF and exposure, "
                "shot noise, weighted back-projection); also writes TS.tlt, TS.defocus, dose.txt, tomograms.star, tilt_series/TS.star");
  sim->add_option("--tilt-angles", sa.tilt_angles, "With --tilt-series: the tilts, start,stop:step in degrees")->capture_default_str();
  sim->add_option("--dose-per-tilt", sa.dose_per_tilt, "With --tilt-series: e/Å² per image, recorded dose-symmetrically")
      ->check(finite_number(0, 1e6))->capture_default_str();
  sim->add_option("--defocus", sa.defocus, "With --tilt-series: the mean defocus in Å (underfocus positive)")
      ->check(finite_number(1, 1e7))->capture_default_str();
  sim->add_option("--defocus-spread", sa.defocus_spread, "With --tilt-series: each tilt's defocus is drawn in mean ± this (Å)")
      ->check(finite_number(0, 1e7))->capture_default_str();
  sim->add_option("--astigmatism", sa.astigmatism, "With --tilt-series: defocus U - V in Å")->check(finite_number(-1e6, 1e6))->capture_default_str();
  sim->add_option("--contrast", sa.contrast, "With --tilt-series: image contrast per unit of projected density")
      ->check(finite_number(0, 1e6, true))->capture_default_str();
  sim->add_flag("--phase-flip", sa.phase_flip, "With --tilt-series: the reconstruction flips each image's phases");
  sim->add_option("--template", sa.template_file, "With --tilt-series: the template (MRC at --voxel-size, e.g. from `template --model`) "
                  "instead of the synthetic one");
  sim->add_option("--other", sa.others, "With --template: another particle (MRC, the template's box) planted beside its copies; repeatable");
  sim->add_option("--other-copies", sa.other_copies, "Copies of each --other, one count per --other")->check(whole_number(0, 100000));

  match_args ma;
  auto* mat = app.add_subcommand("match", "Score every rotation of a template against a target");
  mat->add_option("-t,--target", ma.target, "Target volume (MRC)")->required();
  mat->add_option("-m,--template", ma.templ, "Template volume (MRC), the target's voxel size")->required();
  mat->add_option("--mask", ma.mask, "Template mask (MRC, the template's shape; default: a soft sphere)");
  mat->add_option("--target-mask", ma.target_mask, "Target mask (MRC, the target's shape): tiles where it is 0 are skipped; MCC reads it");
  mat->add_option("-o,--output", ma.output, "Output folder")->required();
  auto* step = mat->add_option("-a,--angular-step", ma.angular_step, "Angular step in degrees (a uniform set)")
                   ->check(finite_number(0, 180, true))->capture_default_str();
  auto* diameter = mat->add_option("--particle-diameter", ma.particle_diameter,
                                   "The particle's diameter in Å: the angular step by the Crowther criterion, resolution / diameter "
                                   "radians (instead of --angular-step)")
                       ->check(finite_number(0, 1e7, true))->excludes(step);
  mat->add_option("--resolution", ma.resolution,
                  "With --particle-diameter: the resolution in Å (default: two voxels, or --lowpass when coarser)")
      ->check(finite_number(0, 1e7, true));
  mat->add_option("--rotations", ma.rotations, "Rotation file: per line ZYZ Euler angles in degrees, or a quaternion w x y z")
      ->excludes(step)->excludes(diameter);
  mat->add_option("--rotations-convention", ma.rotations_convention,
                  "How the rotation file's rows turn the template: active (each row is applied to it), relion (Euler "
                  "angles as rlnAngleRot/Tilt/Psi), pytme (pyTME's sets, which pull the template: their inverses) or "
                  "pytom (pytom-match-pick's angle lists: ZXZ Euler angles in radians)")
      ->check(CLI::IsMember({"active", "relion", "pytme", "pytom"}))->capture_default_str();
  mat->add_option("--angle-set", ma.angle_set,
                  "The rotations for the step: uniform (fusor's, a covering radius within the step) or healpix "
                  "(pytom-match-pick's list: HEALPix pixel centres and in-plane turns, the same rotations in the same order)")
      ->check(CLI::IsMember({"uniform", "healpix"}))->capture_default_str();
  mat->add_option("--rotation-centre", ma.rotation_centre,
                  "The template's point the rotations turn about: relion (voxel m // 2, RELION's box centre) or "
                  "pytme ((m - 1) / 2, half a voxel lower on an even axis); the peaks name where it lands")
      ->check(CLI::IsMember({"relion", "pytme"}))->capture_default_str();
  mat->add_option("--cone-angle", ma.cone_angle, "Only rotations that turn the template's z axis within this many degrees of "
                  "--cone-axis (pyTME's cone: filaments, membrane proteins), spaced by the angular step")
      ->check(finite_number(0, 180));
  mat->add_option("--cone-axis", ma.cone_axis, "The cone's axis, x y z in the target's frame")->expected(3)
      ->check(finite_number(-1e6, 1e6))->capture_default_str();
  auto* seeds = mat->add_option("--seeds", ma.seeds,
                                "A constrained search about known points (pyTME's --orientations): a particle table, RELION 5 STAR "
                                "(rlnCenteredCoordinate*Angst or rlnCoordinate* in voxels, rlnAngleRot/Tilt/Psi) or the TSV "
                                "`peaks` writes; each point's ellipsoid (--seed-radius) is scored with the rotations of its cone "
                                "(--seed-cone)");
  mat->add_option("--seed-radius", ma.seed_radius, "With --seeds: the voxels searched about each point, one radius or x,y,z "
                  "(pyTME's --orientations-uncertainty)")
      ->delimiter(',')->expected(1, 3)->check(finite_number(0, 1e6))->needs(seeds);
  mat->add_option("--seed-cone", ma.seed_cone, "With --seeds: only rotations turning the template's z axis within this many degrees "
                  "of the point's own (pyTME's --orientations-cone; default: every rotation)")
      ->check(finite_number(0, 180))->needs(seeds);
  mat->add_option("--seeds-tomo", ma.seeds_tomo, "With --seeds: the STAR rows of this rlnTomoName only")->needs(seeds);
  mat->add_option("--symmetry", ma.symmetry, "Template symmetry: Cn, Dn, T, O or I (RELION's orientations; I is I2; I1, I3, I4 its other settings)")->capture_default_str();
  mat->add_option("-s,--score", ma.score, "Score: CC, LCC, CORR, CAM, FLCSphericalMask, FLC or MCC")->capture_default_str();
  mat->add_option("--lowpass", ma.lowpass, "Low-pass cut-off in Å (Gaussian; 0: none)")->check(finite_number(0, 1e6));
  mat->add_option("--highpass", ma.highpass, "High-pass cut-off in Å (Gaussian; 0: none)")->check(finite_number(0, 1e6));
  mat->add_option("--wedge", ma.wedge, "Missing wedge: the tilt range in degrees (e.g. -60 60), tilt axis y, beam z")
      ->expected(2)->check(finite_number(-90, 90));
  mat->add_option("--defocus", ma.tilt.defocus,
                  "CTF defocus in Å (underfocus positive; every tilt's with a tilt series), or a file of one per tilt: "
                  "IMOD's .defocus (ctfplotter, versions 2 and 3) or CTFFIND4/5's output");
  mat->add_option("--tilt-angles", ma.tilt.angles,
                  "The tilt series: IMOD's .tlt/.rawtlt (an angle per line) or start,stop:step (e.g. -60,60:3); weights the "
                  "template by each tilt's slab, CTF and exposure instead of a --wedge");
  mat->add_option("--mdoc", ma.tilt.mdoc, "The tilt series from SerialEM's .mdoc: the angles, the doses (accumulated in recording order)");
  mat->add_option("--warp-xml", ma.tilt.warp_xml,
                  "The tilt series from Warp/M's tilt-series XML: angles, doses, per-tilt defocus and astigmatism, the optics");
  mat->add_option("--relion5-tomograms-star", ma.tilt.relion_star,
                  "The tilt series from RELION 5's tomograms.star and the tomogram's tilt-series STAR (with --tomogram)");
  mat->add_option("--tomogram", ma.tilt.tomogram, "The tomogram of --relion5-tomograms-star to weight by (its rlnTomoName)");
  mat->add_option("--dose", ma.tilt.dose, "The dose accumulated before each tilt, e/Å², one per line (pytom's --dose-accumulation file)");
  mat->add_option("--ctf-model", ma.tilt.ctf_model, "What the tomogram's reconstruction did about the CTF: none, or phase-flip (|CTF| remains)")
      ->check(CLI::IsMember({"none", "phase-flip"}))->capture_default_str();
  mat->add_option("--tilt-weighting", ma.tilt.weighting,
                  "How each tilt's exposure and angle weight it (pyTME's names): grigorieff (Grant & Grigorieff's exposure "
                  "filter), relion (a Gaussian of the dose, and cos(angle)), angle (cos(angle)), none")
      ->check(CLI::IsMember({"none", "angle", "relion", "grigorieff"}))->capture_default_str();
  mat->add_option("--reconstruction-filter", ma.tilt.filter, "The weighted back-projection's radial filter, applied to each tilt's slab")
      ->check(CLI::IsMember({"none", "ram-lak", "ramp", "shepp-logan", "cosine", "hamming"}))->capture_default_str();
  mat->add_option("--defocus-handedness", ma.tilt.handedness,
                  "The defocus gradient over the tomogram's height (pytom's): 0 none, 1 or -1 its sign; each tile of a tiled "
                  "scan (--memory) is weighted with the defocus at its centre")
      ->check(CLI::IsMember({-1, 0, 1}))->capture_default_str();
  mat->add_option("--phase-shift", ma.tilt.phase_shift, "CTF phase shift in degrees (a phase plate's), every tilt")->check(finite_number(-360, 360));
  mat->add_option("--voltage", ma.voltage, "CTF acceleration voltage in kV")->check(finite_number(1, 3000))->capture_default_str();
  mat->add_option("--cs", ma.cs, "CTF spherical aberration in mm")->check(finite_number(0, 100))->capture_default_str();
  mat->add_option("--amplitude-contrast", ma.amplitude_contrast, "CTF amplitude contrast")->check(finite_number(0.0, 0.999))->capture_default_str();
  mat->add_flag("--phase-flip", ma.phase_flip, "Use |CTF| (phase-flipped data; --ctf-model phase-flip with a tilt series)");
  mat->add_flag("--whiten", ma.whiten, "Whiten target and template by the target's radial power spectrum");
  mat->add_flag("--noise-correction", ma.noise_correction,
                "Scan a phase-randomised copy of the template (its amplitudes, random phases) with the same rotations and "
                "subtract its per-voxel best score, adding its mean back (STOPGAP's and pytom's random-phase correction; twice the work)");
  mat->add_option("--noise-seed", ma.noise_seed, "The phase-randomised template's seed")->capture_default_str();
  mat->add_flag("--hdf5", ma.hdf5, "Also write the score and rotation maps as scores.h5 and rotations.h5, in pyTME's Density "
                "layout (data indexed [x, y, z], origin, sampling_rate): pyTME's Density.from_file reads them");
  mat->add_flag("--half-precision", ma.half_precision,
                "Write scores.mrc as float16 (MRC mode 12: half the file, each score rounded once, as pytom-match-pick's "
                "--half-precision) and rotations.mrc as int16 (mode 1, exact) when there are at most 32767 rotations; the scan "
                "computes in float32 and the HDF5 maps stay float32. Needs a normalised score (not CC or LCC)");
  mat->add_option("--memory", ma.memory, "Memory budget, e.g. 800M or 16G (default: what is available); tiles the target when needed");
  mat->add_option("-j,--threads", ma.threads, "Threads (0: all of this machine's)")->check(whole_number(0, max_threads()))->capture_default_str();
  mat->add_option("--edges", ma.edges,
                  "Beyond the target's faces: zeros, or wrap (the target repeated, as pyTME without --pad-edges; "
                  "cheaper where the target's lengths are 7-smooth)")
      ->check(CLI::IsMember({"zeros", "wrap"}))->capture_default_str();
  mat->add_option("--grid", ma.grid,
                  "FFT grid: fast (the cheapest lengths with factors 2, 3, 5, 7 by a cost model of FFTW) or target "
                  "(the least: with --edges wrap the target's own shape, prime lengths included)")
      ->check(CLI::IsMember({"fast", "target"}))->capture_default_str();
  mat->add_option("--planning", ma.planning, "FFT planning effort")->check(CLI::IsMember({"estimate", "measure", "patient"}))->capture_default_str();
  mat->add_flag("-q,--quiet", ma.quiet, "No progress line or summary");

  peaks_args pa;
  auto* pk = app.add_subcommand("peaks", "Call peaks on a match output; write TSV and RELION 5 STAR");
  pk->add_option("-i,--input", pa.input, "A match output folder")->required();
  pk->add_option("-o,--output", pa.output, "Output path without extension (default: INPUT/peaks)");
  pk->add_option("-n,--count", pa.count, "At most this many peaks")->check(whole_number(1, 100000000))->capture_default_str();
  pk->add_option("-d,--min-distance", pa.min_distance, "Voxels between peaks (default: the template's radius)")
      ->check(finite_number(0, 1e6));
  pk->add_option("--margin", pa.margin, "Voxels kept clear of each face: one count, or x y z")
      ->expected(1, 3)->check(whole_number(0, 100000));
  auto* ms = pk->add_option("--min-score", pa.min_score, "Absolute score threshold")->check(finite_number(-1e30, 1e30));
  pk->add_option("--false-positives", pa.false_positives, "Threshold that noise crosses this often in the whole search")
      ->check(finite_number(0, 1e30, true))->excludes(ms);
  pk->add_option("--tomo-name", pa.tomo_name, "rlnTomoName in the STAR file (default: the target's file name)");
  pk->add_option("--tomogram-mask", pa.tomogram_mask, "MRC of the target's shape: peaks only where it is above 0");
  pk->add_option("--background", pa.backgrounds, "A match output over the same target (e.g. of a `template --scramble-phases` "
                 "template): the largest of these backgrounds' scores and 0 is subtracted per voxel and its mean added back "
                 "(pyTME's postprocess --background-file); repeatable");
  pk->add_flag("--tophat", pa.tophat, "Peaks only where the scores' white top-hat passes the cut-off its noise fit gives for "
               "--false-positives (or 1): sharp peaks, not broad ridges (pytom-match-pick's --tophat-filter)");
  pk->add_option("--tophat-connectivity", pa.tophat_connectivity, "The top-hat's element: 1 (6 neighbours), 2 (18) or 3 (26)")
      ->check(CLI::IsMember({1, 2, 3}))->capture_default_str();
  pk->add_flag("-q,--quiet", pa.quiet, "No listing of the peaks");

  merge_stars_args ga;
  auto* mg = app.add_subcommand("merge-stars", "Merge the particle tables (peaks.star) of several tomograms into one RELION 5 STAR file");
  mg->add_option("inputs", ga.inputs, "The STAR files, two or more (the same columns)")->required();
  mg->add_option("-o,--output", ga.output, "The merged STAR file")->required();
  mg->add_flag("-q,--quiet", ga.quiet, "No summary line");

  stats_args ta2;
  auto* st = app.add_subcommand("stats", "Fit the noise's Gaussian to a match output's score histogram: the false positives expected "
                                "above each threshold, the cut-off, and an SVG picture");
  st->add_option("-i,--input", ta2.input, "A match output folder")->required();
  st->add_option("-o,--output", ta2.output, "Output path without extension (default: INPUT/stats): .svg, .tsv, .json");
  st->add_option("--bins", ta2.bins, "Histogram bins")->check(whole_number(10, 100000))->capture_default_str();
  st->add_option("--false-positives", ta2.false_positives, "The cut-off is where the fit expects this many noise voxels above")
      ->check(finite_number(0, 1e30, true))->capture_default_str();
  st->add_option("--target-mask", ta2.target_mask, "MRC of the target's shape: only voxels where it is above 0");
  st->add_option("--background", ta2.backgrounds, "A match output over the same target whose scores are subtracted first, "
                 "as `peaks --background` does; repeatable");
  st->add_flag("--tophat", ta2.tophat, "The white top-hat of the scores instead of the scores");
  st->add_option("--tophat-connectivity", ta2.connectivity, "The top-hat's element: 1, 2 or 3")
      ->check(CLI::IsMember({1, 2, 3}))->capture_default_str();
  st->add_flag("-q,--quiet", ta2.quiet, "No summary line");

  ma.command_line.assign(argv, argv + argc);
  const world w(argc, argv);  // under mpirun: one rank of several
  preview_args va;
  auto* pv = app.add_subcommand("preview", "Draw orthogonal slices of the target and the score map with the peaks marked (PNG)");
  pv->add_option("-i,--input", va.input, "A match output folder")->required();
  pv->add_option("-o,--output", va.output, "The PNG file (default: INPUT/preview.png)");
  pv->add_option("--peaks", va.peaks, "A peaks table (default: INPUT/peaks.tsv when there is one)");
  pv->add_option("--at", va.at, "The voxel the slices pass through, x y z (default: the best peak, or the highest score)")
      ->expected(3)->check(whole_number(0, 1000000));
  pv->add_option("--width", va.width, "About this many pixels wide")->check(whole_number(64, 20000))->capture_default_str();
  pv->add_flag("-q,--quiet", va.quiet, "No summary line");

  template_args ta;
  auto* tp = app.add_subcommand("template", "Write a template MRC from an atomic model (PDB or mmCIF) or a density map, at the tomogram's voxel size");
  auto* from_model = tp->add_option("--model", ta.model, "Atomic model: PDB or mmCIF (gzipped too); its first model's atoms, "
                                    "electron scattering factors (International Tables C 4.3.2.2) blurred by each atom's B-factor");
  tp->add_option("--map", ta.map, "Density map (MRC), resampled by Fourier cropping or padding")->excludes(from_model);
  tp->add_option("-o,--output", ta.output, "The template MRC to write")->required();
  tp->add_option("--voxel-size", ta.voxel_size, "The template's voxel size in Å (the tomogram's)")->required()
      ->check(finite_number(0, 1e6, true));
  tp->add_option("--box", ta.box, "The template's edge in voxels, or x y z (default for --map: the map's extent)")
      ->expected(1, 3)->check(whole_number(1, 4096));
  tp->add_option("--map-voxel-size", ta.map_voxel_size, "With --map: its voxel size in Å, instead of its header's")
      ->check(finite_number(0, 1e6, true));
  tp->add_option("--centre", ta.centre, "With --map: the point put on the box's centre voxel, the map's centre of mass (of its positive "
                 "values) or its centre voxel (box); a model is centred on its centre of mass")
      ->check(CLI::IsMember({"mass", "box"}))->capture_default_str();
  tp->add_option("--blur", ta.blur, "With --model: a B-factor (Å²) added to every atom's")->check(finite_number(0, 1e6));
  tp->add_option("--lowpass", ta.lowpass, "A Gaussian low-pass at this resolution in Å (0: none)")->check(finite_number(0, 1e6));
  tp->add_flag("--invert", ta.invert, "Negate the template (dark protein, as in a tomogram that was not inverted)");
  tp->add_flag("--mirror", ta.mirror, "Mirror along z about the centre voxel (the other handedness)");
  tp->add_flag("--keep-waters", ta.keep_waters, "With --model: keep the waters (left out by default)");
  tp->add_option("--scramble-phases", ta.scramble_seed, "The template's amplitude spectrum with random phases from this seed: "
                 "a background template (pyTME's --scramble-phases), matched like the template and given to "
                 "`peaks --background`");
  tp->add_flag("-q,--quiet", ta.quiet, "No summary line");

  mask_args ka;
  auto* mk = app.add_subcommand("mask", "Write a mask MRC: a sphere, ellipsoid or cylinder, or tight around a template");
  mk->add_option("-o,--output", ka.output, "The mask MRC to write")->required();
  mk->add_option("--shape", ka.shape, "sphere, ellipsoid, cylinder (about z) or tight (the template's voxels beyond --threshold, "
                 "grown by --dilation)")
      ->check(CLI::IsMember({"sphere", "ellipsoid", "cylinder", "tight"}))->capture_default_str();
  mk->add_option("--box", ka.box, "The mask's edge in voxels, or x y z (default: the --template's shape)")
      ->expected(1, 3)->check(whole_number(1, 4096));
  mk->add_option("--template", ka.templ, "The template (MRC): the shape, voxel size and, for tight, the density followed");
  mk->add_option("--voxel-size", ka.voxel_size, "Voxel size in Å for the header (default: the template's, or 1)")
      ->check(finite_number(0, 1e6, true));
  mk->add_option("--radius", ka.radius, "Sphere or cylinder radius in voxels")->check(finite_number(0, 1e6, true));
  mk->add_option("--radii", ka.radii, "Ellipsoid radii in voxels along x y z")->expected(3)->check(finite_number(0, 1e6, true));
  mk->add_option("--height", ka.height, "Cylinder height in voxels")->check(finite_number(0, 1e6, true));
  mk->add_option("--soft-edge", ka.soft_edge, "Raised-cosine edge width in voxels (0: hard)")->check(finite_number(0, 1e6))
      ->capture_default_str();
  mk->add_option("--threshold", ka.threshold, "Tight: the template's voxels above this are the particle")
      ->check(finite_number(-1e30, 1e30))->capture_default_str();
  mk->add_flag("--dark", ka.dark, "Tight: the particle is below --threshold (dark protein)");
  mk->add_option("--dilation", ka.dilation, "Tight: grow the particle by this many voxels")->check(finite_number(0, 1e6))
      ->capture_default_str();
  mk->add_flag("-q,--quiet", ka.quiet, "No summary line");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  // a failure on any rank ends the job (MPI_Abort): no rank waits for a merge that never comes
  const std::string who = w.size() > 1 ? std::string(program_name) + " (rank " + std::to_string(w.rank()) + " of " +
                                             std::to_string(w.size()) + ")"
                                       : std::string(program_name);
  if (w.rank() != 0 && !*mat) return 0;  // everything but match is one process's work
  try {
    if (*sim) return run_simulate(sa);
    if (*tp) return run_template(ta);
    if (*mk) return run_mask(ka);
    catch_interrupts();
    if (*mat) {
      w.select_gpu<scan_backend>();
      return run_match<scan_backend>(ma, w);
    }
    if (*pk) return run_peaks(pa);
    if (*pv) return run_preview(va);
    if (*st) return run_stats(ta2);
    if (*mg) return run_merge_stars(ga);
  } catch (const fusor::match::scan_stopped&) {
    w.abort("\n" + who + ": interrupted; no output was written", 130);
  } catch (const std::exception& e) {
    w.abort(who + ": error: " + e.what(), 1);
  }
  return 0;
}
