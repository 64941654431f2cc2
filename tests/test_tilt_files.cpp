// fusor::match's readers of tilt-series metadata, against files written the way IMOD
// (ctfplotter's .defocus, .tlt), CTFFIND4, SerialEM (.mdoc) and pytom's users write them; every
// malformed file an io_error naming the file, the line and the field.
#include <doctest/doctest.h>

#include <fusor/match.hpp>

#include "temp_dir.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace match = fusor::match;

namespace {

std::filesystem::path write(const test::temp_dir& dir, const std::string& name, const std::string& text) {
  const auto p = dir.path / name;
  std::ofstream(p) << text;
  return p;
}

}  // namespace

TEST_CASE("tilt files: IMOD tilt angles, pytom's dose file and the start,stop:step form") {
  const test::temp_dir dir("tilt_files");
  // newstack/tilt write one angle per line with leading blanks; a trailing blank line is common
  const auto tlt = write(dir, "TS_01.tlt", "  -60.00\n  -57.00\r\n   -3.50\n    0.00\n   57.25\n\n");
  CHECK(match::read_tilt_angles(tlt) == std::vector<double>{-60, -57, -3.5, 0, 57.25});
  const auto dose = write(dir, "dose.txt", "0\n3.1\n6.2\n9.3\n");
  CHECK(match::read_dose_file(dose) == std::vector<double>{0, 3.1, 6.2, 9.3});
  const auto range = match::parse_tilt_range("-60,60:3");
  REQUIRE(range.size() == 41);
  CHECK(range.front() == -60);
  CHECK(range[20] == 0);
  CHECK(range.back() == 60);
  CHECK(match::parse_tilt_range("50,-50:-20") == std::vector<double>{50, 30, 10, -10, -30, -50});
  CHECK(match::parse_tilt_range("0,1:0.3").size() == 4);  // 0, 0.3, 0.6, 0.9: stop not on the grid
  CHECK(match::parse_tilt_range("5,5:1") == std::vector<double>{5});
  for (const char* bad : {"-60,60", "60:3", "-60,60:0", "-60,60:-3", "-60,x:3", "-95,60:5", "1,2:3:4"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(match::parse_tilt_range(bad), doctest::Contains("expected start,stop:step"), fusor::value_error);
  }
  // malformed files name the file, the line and what is wrong
  const auto two = write(dir, "two.tlt", "-60\n-57 3\n");
  CHECK_THROWS_WITH_AS(match::read_tilt_angles(two), doctest::Contains("two.tlt:2: expected one tilt angle per line, got 2 fields"), fusor::io_error);
  const auto word = write(dir, "word.tlt", "-60\n\n-5o\n");
  CHECK_THROWS_WITH_AS(match::read_tilt_angles(word), doctest::Contains("word.tlt:3: tilt angle '-5o' is not a finite number"), fusor::io_error);
  const auto steep = write(dir, "steep.tlt", "-60\n95\n");
  CHECK_THROWS_WITH_AS(match::read_tilt_angles(steep), doctest::Contains("view 2 has tilt angle 95"), fusor::io_error);
  CHECK_THROWS_WITH_AS(match::read_tilt_angles(write(dir, "empty.tlt", "\n\n")), doctest::Contains("holds no tilt angle"), fusor::io_error);
  CHECK_THROWS_WITH_AS(match::read_tilt_angles(dir.path / "absent.tlt"), doctest::Contains("cannot open"), fusor::io_error);
  CHECK_THROWS_WITH_AS(match::read_dose_file(write(dir, "neg.txt", "0\n-3\n")), doctest::Contains("view 2 has dose -3"), fusor::io_error);
}

TEST_CASE("tilt files: ctfplotter's defocus files, versions 2 and 3, astigmatism, phase shift, radians, ranges") {
  const test::temp_dir dir("tilt_files");
  // version 2: the first line carries the version; a line may cover several views
  const auto v2 = write(dir, "v2.defocus",
                        "1\t1\t-60.00\t-60.00\t4062\t2\n"
                        "2\t3\t-57.00\t-54.00\t4120.5\n"
                        "4\t4\t-51.00\t-51.00\t3990\n");
  const auto d2 = match::read_imod_defocus(v2, 4);
  REQUIRE(d2.size() == 4);
  CHECK(d2[0].defocus_u == 40620);
  CHECK(d2[0].defocus_v == 40620);
  CHECK(d2[1].defocus_u == 41205);
  CHECK(d2[2].defocus_u == 41205);
  CHECK(d2[3].defocus_v == 39900);
  // version 3 with astigmatism (flag 1): defocus 1, defocus 2, angle
  const auto v3 = write(dir, "v3.defocus",
                        "1  0 0. 0. 0  3\n"
                        "1\t1\t-60.00\t-60.00\t4062.1\t3954.3\t-41.25\n"
                        "2\t2\t-57.00\t-57.00\t4110.0\t4001.0\t-40.00\n");
  const auto d3 = match::read_imod_defocus(v3, 2);
  CHECK(std::abs(d3[0].defocus_u - 40621) < 1e-9);
  CHECK(std::abs(d3[0].defocus_v - 39543) < 1e-9);
  CHECK(d3[0].astigmatism_angle == -41.25);
  CHECK(d3[1].phase_shift == 0);
  // astigmatism in radians (2) and phase shifts in radians (4 + 8), and a cut-on column (32)
  const auto rad = write(dir, "rad.defocus",
                         "47 0 0. 0. 0 3\n"
                         "1 1 0.00 0.00 3000 2900 0.5 1.5707963267948966 0.02\n");
  const auto dr = match::read_imod_defocus(rad, 1);
  CHECK(std::abs(dr[0].astigmatism_angle - 0.5 * 180 / M_PI) < 1e-9);
  CHECK(std::abs(dr[0].phase_shift - 90) < 1e-9);
  // phase shift without astigmatism (4): six columns
  const auto ph = write(dir, "ph.defocus", "4 0 0. 0. 0 3\n1 1 0 0 3500 45\n");
  CHECK(match::read_imod_defocus(ph, 1)[0].phase_shift == 45);
  // malformed: the line and the field
  const auto check = [&](const std::string& name, const std::string& text, std::size_t views, const char* says) {
    CAPTURE(name);
    CHECK_THROWS_WITH_AS(match::read_imod_defocus(write(dir, name, text), views), doctest::Contains(says), fusor::io_error);
  };
  check("short.defocus", "1 0 0. 0. 0 3\n1 1 -60 -60 4062 3954\n", 1, "short.defocus:2: expected 7 fields for version 3 with flags 1, got 6");
  check("version.defocus", "1 1 -60 -60 4062 4\n", 1, "version.defocus:1: version 4 is not 2 or 3");
  check("gap.defocus", "1 1 -60 -60 4062 2\n3 3 -54 -54 4000\n", 3, "gives no defocus for view 2 of 3");
  check("twice.defocus", "1 2 -60 -57 4062 2\n2 2 -57 -57 4000\n", 2, "twice.defocus:2: view 2 was already given on line 1");
  check("beyond.defocus", "1 1 -60 -60 4062 2\n2 5 -57 -45 4000\n", 3, "beyond.defocus:2: views 2 to 5 are not a range within 1..3");
  check("over.defocus", "1 1 -60 -60 -4062 2\n", 1, "over.defocus:1: defocus -4062 nm, -4062 nm; expected positive underfocus");
  check("nan.defocus", "1 1 -60 -60 nan 2\n", 1, "nan.defocus:1: defocus 'nan' is not a finite number");
  check("invert.defocus", "17 0 0. 0. 0 3\n1 1 0 0 3000 2900 10\n", 1, "has 16 (tilt angles to be inverted)");
  check("empty.defocus", "\n", 1, "is empty");
}

TEST_CASE("tilt files: CTFFIND4 output, SerialEM mdoc, and a series assembled from them") {
  const test::temp_dir dir("tilt_files");
  const auto ctffind = write(dir, "TS_01_ctffind.txt",
                             "# Output from CTFFind version 4.1.14, run on 2024-03-01 10:00:00\n"
                             "# Input file: /data/TS_01.mrc ; Number of micrographs: 3\n"
                             "# Pixel size: 1.350 Angstroms ; acceleration voltage: 300.0 keV ; spherical aberration: 2.70 mm ; amplitude contrast: 0.07\n"
                             "# Columns: #1 - micrograph number; #2 - defocus 1 [Angstroms]; #3 - defocus 2; #4 - azimuth of astigmatism; "
                             "#5 - additional phase shift [radians]; #6 - cross correlation; #7 - spacing (in Angstroms) up to which CTF rings were fit successfully\n"
                             "1.000000 31250.292969 30112.919922 -52.318321 0.000000 0.184522 8.274419\n"
                             "2.000000 31410.000000 30200.500000 -50.000000 0.523599 0.171100 9.100000\n"
                             "3.000000 31800.000000 30950.000000 -49.500000 0.000000 0.150000 10.500000\n");
  const auto c = match::read_ctffind(ctffind);
  REQUIRE(c.size() == 3);
  CHECK(std::abs(c[0].defocus_u - 31250.292969) < 1e-9);
  CHECK(std::abs(c[0].defocus_v - 30112.919922) < 1e-9);
  CHECK(c[0].astigmatism_angle == -52.318321);
  CHECK(std::abs(c[1].phase_shift - 30.0000) < 1e-4);  // 0.523599 rad
  CHECK_THROWS_WITH_AS(match::read_ctffind(write(dir, "c1.txt", "1 30000 29000 10 0 0.1\n")),
                       doctest::Contains("c1.txt:1: expected at least 7 columns, got 6"), fusor::io_error);
  CHECK_THROWS_WITH_AS(match::read_ctffind(write(dir, "c2.txt", "1 30000 29000 10 0 0.1 8\n3 30000 29000 10 0 0.1 8\n")),
                       doctest::Contains("c2.txt:2: micrograph 3 where 2 was expected next"), fusor::io_error);
  CHECK_THROWS_WITH_AS(match::read_ctffind(write(dir, "c3.txt", "# nothing\n")), doctest::Contains("holds no micrograph"), fusor::io_error);

  // SerialEM: global keys, title sections, then one [ZValue] section per image in recording
  // order (a dose-symmetric scheme: 0, +3, -3, ...)
  const auto mdoc = write(dir, "TS_01.mrc.mdoc",
                          "PixelSpacing = 1.35\nVoltage = 300\nImageFile = TS_01.mrc\nImageSize = 4096 4096\nDataMode = 1\n\n"
                          "[T = SerialEM: Digitized on EMBL Krios                   10-Mar-24  12:00:00    ]\n\n"
                          "[T =     Tilt axis angle = 85.3, binning = 1  spot = 7  camera = 0]\n\n"
                          "[ZValue = 0]\nTiltAngle = 0.0012\nStagePosition = 12.3 -45.6\nMagnification = 64000\nExposureDose = 3.1\n"
                          "PixelSpacing = 1.35\nDateTime = 10-Mar-24  12:01:02\n\n"
                          "[ZValue = 1]\nTiltAngle = 2.9987\nExposureDose = 3.0\nDateTime = 10-Mar-24  12:01:40\n\n"
                          "[ZValue = 2]\nTiltAngle = -3.0021\nExposureDose = 3.2\nDateTime = 10-Mar-24  12:02:15\n");
  const auto m = match::read_mdoc(mdoc);
  CHECK(m.angles == std::vector<double>{0.0012, 2.9987, -3.0021});
  REQUIRE(m.doses.size() == 3);
  CHECK(m.doses[0] == 0);
  CHECK(std::abs(m.doses[1] - 3.1) < 1e-12);
  CHECK(std::abs(m.doses[2] - 6.1) < 1e-12);
  CHECK(m.pixel_size == 1.35);
  CHECK_THROWS_WITH_AS(match::read_mdoc(write(dir, "m1.mdoc", "[ZValue = 0]\nTiltAngle = 0\n[ZValue = 2]\nTiltAngle = 3\n")),
                       doctest::Contains("m1.mdoc:3: ZValue '2' where 1 was expected next"), fusor::io_error);
  CHECK_THROWS_WITH_AS(match::read_mdoc(write(dir, "m2.mdoc", "[ZValue = 0]\nTiltAngle = 0\n[ZValue = 1]\nExposureDose = 3\n")),
                       doctest::Contains("m2.mdoc:3: the section has no TiltAngle"), fusor::io_error);
  CHECK_THROWS_WITH_AS(match::read_mdoc(write(dir, "m3.mdoc", "[ZValue = 0]\nTiltAngle = abc\n")),
                       doctest::Contains("m3.mdoc:2: TiltAngle 'abc' is not a finite number"), fusor::io_error);
  CHECK_THROWS_WITH_AS(match::read_mdoc(write(dir, "m4.mdoc", "PixelSpacing = 2\n")), doctest::Contains("holds no [ZValue = n] section"),
                       fusor::io_error);

  // a series from the parts: counts checked against the angles, the whole validated
  const auto s = match::assemble_tilt_series(m.angles, m.doses, c, {300, 2.7, 0.07}, match::ctf_correction::phase_flip);
  REQUIRE(s.tilts.size() == 3);
  CHECK(s.tilts[2].angle == -3.0021);
  CHECK(s.tilts[2].defocus_u == 31800);
  CHECK(s.tilts[1].dose == m.doses[1]);
  CHECK(s.correction == match::ctf_correction::phase_flip);
  CHECK(s.has_defocus());
  CHECK_THROWS_WITH_AS(match::assemble_tilt_series({0, 3}, m.doses, {}), doctest::Contains("3 doses for 2 tilt angles"), fusor::value_error);
  CHECK_THROWS_WITH_AS(match::assemble_tilt_series({0, 3}, {}, c), doctest::Contains("3 defocus values for 2 tilt angles"), fusor::value_error);
  CHECK_THROWS_WITH_AS(match::assemble_tilt_series({}, {}, {}), doctest::Contains("at least one tilt"), fusor::value_error);
}
