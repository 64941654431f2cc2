// .npz archives: NumPy's archives (tests/data/npz, made by tests/data/make_npz_fixtures.py with
// np.savez and np.savez_compressed) load with the values NumPy wrote, and their entries' bytes are
// what fusor writes for the same arrays; round trips for every element type at edge sizes, stored
// and deflated; damaged, missing and misused archives, each with its exception; and checkpoints
// of a model's parameters and an optimizer's state, which resume training bit for bit.
// (tests/io/check_npz.py reads fusor's archives with Python's zipfile, independently of libzip.)
#include "common.hpp"
#include "temp_dir.hpp"
#include "data_dir.hpp"

#include <complex>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>


using namespace fusor;
using test::index_t;
namespace fs = std::filesystem;
namespace nn = fusor::ad::nn;
namespace optim = fusor::ad::optim;

namespace {

fs::path fixture(const char* name) { return test::data_dir() / "npz" / name; }

struct temp_dir : test::temp_dir {
  temp_dir() : test::temp_dir("npz") {}
};

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  REQUIRE(f.good());
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
void write_text(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f << s;
}

template <class T>
std::vector<T> host(const array<T>& a) {
  return std::vector<T>(a.data(), a.data() + a.size());
}

// The fixtures' arrays, from the formulas of make_npz_fixtures.py.
array<float> fixture_w() {
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[std::size_t(i)] = float(i) * 0.5f - 2.0f;
  return array<float>(std::span<const float>(v), extents{3, 4});
}
array<double> fixture_weight() {
  std::vector<double> v(6);
  for (int i = 0; i < 6; ++i) v[std::size_t(i)] = (double(i) - 2.5) / 4;
  return array<double>(std::span<const double>(v), extents{2, 3});
}

}  // namespace

TEST_CASE("NumPy's archives (savez and savez_compressed) load with the values NumPy wrote") {
  for (const char* name : {"savez.npz", "savez_compressed.npz"}) {
    CAPTURE(name);
    const npz_archive z(fixture(name));
    CHECK(z.names() == std::vector<std::string>{"w", "0.weight", "steps", "empty"});
    CHECK(z.contains("0.weight"));
    CHECK_FALSE(z.contains("0.weight.npy"));
    CHECK_FALSE(z.contains("x"));
    const array<float> w = z.load<float>("w");
    CHECK(w.shape() == extents{3, 4});
    CHECK(host(w) == host(fixture_w()));
    const array<double> weight = z.load<double>("0.weight");
    CHECK(weight.shape() == extents{2, 3});
    CHECK(host(weight) == host(fixture_weight()));
    const array<std::int64_t> steps = z.load<std::int64_t>("steps");
    CHECK(steps.ndim() == 0);
    CHECK(steps.item() == 123456789012);
    CHECK(z.load<double>("empty").shape() == extents{0, 3});
    const npy_header h = z.header("w");
    CHECK(h.dtype == "float32");
    CHECK(h.shape == extents{3, 4});
    // the entries hold exactly what fusor's .npy writer makes of the same arrays
    CHECK(z.bytes("w") == to_npy_bytes(fixture_w()));
    CHECK(z.bytes("0.weight") == to_npy_bytes(fixture_weight()));
    CHECK(z.bytes("steps") == to_npy_bytes(full<std::int64_t>(extents{}, std::int64_t(123456789012))));
    // one element type for a whole map: the first entry of another type is named
    CHECK_THROWS_WITH_AS(load_npz<float>(fixture(name)), doctest::Contains("float64"), dtype_error);
  }
  const npz_archive empty(fixture("empty.npz"));
  CHECK(empty.names().empty());
  CHECK(load_npz<float>(fixture("empty.npz")).empty());
}

TEST_CASE("an archive with no arrays is NumPy's empty archive, byte for byte") {
  temp_dir d;
  npz_writer w(d.path / "none.npz");
  w.close();
  CHECK(read_text(d.path / "none.npz") == read_text(fixture("empty.npz")));
  save_npz(d.path / "none2.npz", std::map<std::string, array<float>>{});
  CHECK(npz_archive(d.path / "none2.npz").names().empty());
}

TEST_CASE_TEMPLATE("round trips keep every element at edge sizes, stored and deflated", T, float, double, std::int64_t,
                   std::uint8_t, std::int32_t, std::complex<float>) {
  temp_dir d;
  const auto sizes = test::edge_sizes<float>();
  const double lo = std::is_unsigned_v<T> ? 0 : -100;  // (a negative value has no uint8)
  for (const npz_compression c : {npz_compression::stored, npz_compression::deflated}) {
    const fs::path path = d.path / (c == npz_compression::stored ? "s.npz" : "d.npz");
    std::vector<std::vector<T>> values;
    npz_writer w(path, c);
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      values.push_back(test::values<T>(sizes[k], lo, lo + 200, k + 1));
      w.add("a" + std::to_string(k), test::make(values.back()));
    }
    // a strided view is written in C order; an expression is evaluated
    const array<T> m = test::make(test::values<T>(35, lo / 10, lo / 10 + 18, 77)).reshape(extents{5, 7});
    w.add("view", m(range(0, 5, 2), range(0, 7, 3)));
    w.close();
    const npz_archive z(path);
    REQUIRE(z.names().size() == sizes.size() + 1);
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      CAPTURE(sizes[k]);
      CHECK(z.names()[k] == "a" + std::to_string(k));
      const array<T> back = z.load<T>("a" + std::to_string(k));
      CHECK(back.shape() == extents{sizes[k]});
      CHECK(host(back) == values[k]);
    }
    const array<T> v = z.load<T>("view");
    REQUIRE(v.shape() == extents{3, 3});
    for (index_t i = 0; i < 3; ++i)
      for (index_t j = 0; j < 3; ++j) CHECK(v(i, j) == m(2 * i, 3 * j));
  }
}

TEST_CASE("save_npz and load_npz: a map of arrays by name; deflated archives compress") {
  temp_dir d;
  std::map<std::string, array<double>> m;
  m.emplace("0.weight", fixture_weight());
  m.emplace("zeros", zeros<double>(extents{1000, 100}));
  m.emplace("scalar", full<double>(extents{}, -0.125));
  save_npz(d.path / "s.npz", m);
  save_npz(d.path / "d.npz", m, npz_compression::deflated);
  for (const char* name : {"s.npz", "d.npz"}) {
    const auto back = load_npz<double>(d.path / name);
    REQUIRE(back.size() == 3);
    for (const auto& [k, a] : m) {
      CAPTURE(k);
      CHECK(back.at(k).shape() == a.shape());
      CHECK(host(back.at(k)) == host(a));
    }
  }
  // 800 kB of zeros: stored as they are, deflated to a small fraction
  CHECK(fs::file_size(d.path / "s.npz") > 800'000);
  CHECK(fs::file_size(d.path / "d.npz") < 10'000);
  // saving again replaces the archive
  std::map<std::string, array<double>> one;
  one.emplace("x", full<double>(extents{2}, 1.5));
  save_npz(d.path / "s.npz", one);
  CHECK(npz_archive(d.path / "s.npz").names() == std::vector<std::string>{"x"});
}

TEST_CASE("misuse and damage are typed errors that say what was expected and found") {
  temp_dir d;
  // reading
  CHECK_THROWS_WITH_AS(npz_archive(d.path / "missing.npz"), doctest::Contains("missing.npz"), io_error);
  CHECK_THROWS_WITH_AS(npz_archive(d.path), doctest::Contains("it is a directory"), io_error);
  save_npy(d.path / "plain.npy", full<float>(extents{3}, 1.0f));
  CHECK_THROWS_WITH_AS(npz_archive(d.path / "plain.npy"), doctest::Contains("Not a zip archive"), io_error);
  const npz_archive z(fixture("savez.npz"));
  CHECK_THROWS_WITH_AS(z.load<float>("W"), doctest::Contains("has no array 'W' (it has 'w', '0.weight', 'steps', 'empty')"),
                       io_error);
  CHECK_THROWS_WITH_AS(z.load<double>("w"), doctest::Contains("entry 'w.npy' of the .npz archive"), dtype_error);
  // a damaged entry: one byte of the stored data changed, so its CRC no longer matches
  std::string bytes = read_text(fixture("savez.npz"));
  const std::string w_bytes(reinterpret_cast<const char*>(z.bytes("w").data()), z.bytes("w").size());
  const auto at = bytes.find(w_bytes);
  REQUIRE(at != std::string::npos);
  bytes[at + w_bytes.size() - 1] ^= 0x40;
  write_text(d.path / "crc.npz", bytes);
  const npz_archive damaged(d.path / "crc.npz");
  CHECK_THROWS_WITH_AS(damaged.load<float>("w"), doctest::Contains("CRC error"), io_error);
  CHECK(host(damaged.load<double>("0.weight")) == host(fixture_weight()));  // the other entries are intact
  // truncated: the central directory is gone
  write_text(d.path / "short.npz", read_text(fixture("savez.npz")).substr(0, 300));
  CHECK_THROWS_AS(npz_archive(d.path / "short.npz"), io_error);

  // a size claimed in the directory is bounded by what the entry can hold, before any allocation:
  // a kilobyte archive claiming 3.75 GiB is refused at once (it made the reader allocate 3.9 GB)
  const auto claiming = [&](const char* file, npz_compression c, std::uint32_t claim) {
    npz_writer zw(d.path / file, c);
    zw.add("z", arange<float>(0.0f, 300.0f, 1.0f));
    zw.close();
    std::string zb = read_text(d.path / file);
    const auto put = [&](std::size_t at, std::uint32_t v) {
      for (int i = 0; i < 4; ++i) zb[at + std::size_t(i)] = char((v >> (8 * i)) & 0xff);
    };
    const auto local = zb.find(std::string("PK\x03\x04", 4)), central = zb.find(std::string("PK\x01\x02", 4));
    REQUIRE(local != std::string::npos);
    REQUIRE(central != std::string::npos);
    put(local + 22, claim);  // the uncompressed size, in the local header and the central directory
    put(central + 24, claim);
    write_text(d.path / file, zb);
    return npz_archive(d.path / file);
  };
  {
    const npz_archive bomb = claiming("bomb.npz", npz_compression::deflated, 0xF0000000u);
    CHECK(fs::file_size(d.path / "bomb.npz") < 4096);
    CHECK_THROWS_WITH_AS(bomb.load<float>("z"), doctest::Contains("its directory entry claims 4026531840 bytes, more than its"),
                         io_error);
    CHECK_THROWS_WITH_AS(bomb.bytes("z"), doctest::Contains("(deflate expands at most 1032 times)"), io_error);
    const npz_archive stored_claim = claiming("stored.npz", npz_compression::stored, 5000);
    CHECK_THROWS_WITH_AS(stored_claim.load<float>("z"), doctest::Contains("claims 5000 bytes, more than its 1328 stored bytes"),
                         io_error);
    // a lie within deflate's bound: the data that arrives decides, and its end is an error
    const npz_archive lie = claiming("lie.npz", npz_compression::deflated, 1400);
    CHECK_THROWS_WITH_AS(lie.load<float>("z"), doctest::Contains("expected 1400 bytes, found 1328"), io_error);
  }

  // writing
  npz_writer w(d.path / "w.npz");
  w.add("a", full<float>(extents{2}, 1.0f));
  CHECK_THROWS_WITH_AS(w.add("a", full<float>(extents{2}, 2.0f)), doctest::Contains("'a' was added twice"), value_error);
  CHECK_THROWS_WITH_AS(w.add("", full<float>(extents{2}, 2.0f)), doctest::Contains("name is empty"), value_error);
  CHECK(w.names() == std::vector<std::string>{"a"});
  w.close();
  CHECK_THROWS_WITH_AS(w.add("b", full<float>(extents{2}, 2.0f)), doctest::Contains("after close()"), value_error);
  CHECK(npz_archive(d.path / "w.npz").names() == std::vector<std::string>{"a"});
  // a writer never closed writes nothing, and leaves an existing archive as it was
  {
    npz_writer unfinished(d.path / "w.npz");
    unfinished.add("b", full<float>(extents{2}, 2.0f));
    npz_writer other(d.path / "never.npz");
    other.add("c", full<float>(extents{2}, 2.0f));
  }
  CHECK(npz_archive(d.path / "w.npz").names() == std::vector<std::string>{"a"});
  CHECK_FALSE(fs::exists(d.path / "never.npz"));
  // a directory that does not exist: an io_error naming the archive
  npz_writer lost(d.path / "no" / "such" / "dir.npz");
  lost.add("a", full<float>(extents{2}, 1.0f));
  CHECK_THROWS_WITH_AS(lost.close(), doctest::Contains("dir.npz"), io_error);
  // the writer kept its arrays: once the directory exists, close() writes them
  fs::create_directories(d.path / "no" / "such");
  lost.close();
  CHECK(npz_archive(d.path / "no" / "such" / "dir.npz").names() == std::vector<std::string>{"a"});
}

// ---- checkpoints -------------------------------------------------------------------------------------

namespace {
using params_t = nn::parameters<double>;

auto small_model() { return nn::sequential<double, cpu>(nn::linear(4, 3), nn::relu, nn::linear(3, 2)); }

// gradients for step k: a fixed formula of the step and the position (no model needed to test
// the optimizer's state)
params_t grads_at(const params_t& p, int k) {
  params_t g;
  for (const auto& [name, a] : p) {
    std::vector<double> v(std::size_t(a.size()));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(double(k) * 0.7 + double(i) * 1.3 + double(name.size()));
    g.emplace(name, array<double>(std::span<const double>(v), a.shape()));
  }
  return g;
}

template <class Opt>
void train(params_t& p, Opt& opt, int from, int to) {
  for (int k = from; k < to; ++k) opt.step(p, grads_at(p, k));
}

template <class Opt, class Options>
void check_resume(const Options& o) {
  temp_dir d;
  const auto model = small_model();
  params_t p = model.init(3);
  Opt opt(o);
  train(p, opt, 0, 5);
  nn::save_parameters(d.path / "ck.npz", p, opt);
  train(p, opt, 5, 10);  // the uninterrupted run

  params_t q = model.init(4);  // other values: the load must overwrite them all
  Opt resumed(o);
  nn::load_parameters(d.path / "ck.npz", q, resumed);
  CHECK(resumed.steps() == 5);
  CHECK(resumed.state().size() == opt.state().size());
  train(q, resumed, 5, 10);
  for (const auto& [name, a] : p) {
    CAPTURE(name);
    CHECK(host(q.at(name)) == host(a));  // bit for bit
  }
}
}  // namespace

TEST_CASE("a model's parameters round-trip through a checkpoint NumPy can read, in place") {
  temp_dir d;
  const auto model = small_model();
  const params_t p = model.init(1);
  nn::save_parameters(d.path / "p.npz", p);
  const npz_archive z(d.path / "p.npz");
  CHECK(z.names() == std::vector<std::string>{"0.bias", "0.weight", "2.bias", "2.weight"});
  CHECK(z.bytes("0.weight") == to_npy_bytes(p.at("0.weight")));
  params_t q = model.init(2);
  const double* where = q.at("2.weight").data();
  nn::load_parameters(d.path / "p.npz", q);
  CHECK(q.at("2.weight").data() == where);  // overwritten where it lies
  for (const auto& [name, a] : p) CHECK(host(q.at(name)) == host(a));
}

TEST_CASE("an optimizer resumed from a checkpoint continues bit for bit") {
  SUBCASE("Adam (two slots)") { check_resume<optim::adam<double, cpu>>(optim::adam_options{.lr = 0.01}); }
  SUBCASE("SGD with Nesterov momentum (one slot)") {
    check_resume<optim::sgd<double, cpu>>(optim::sgd_options{.lr = 0.1, .momentum = 0.9, .nesterov = true});
  }
  SUBCASE("plain SGD (no state but the step count)") { check_resume<optim::sgd<double, cpu>>(optim::sgd_options{.lr = 0.1}); }
  SUBCASE("RMSprop with momentum (two slots)") {
    check_resume<optim::rmsprop<double, cpu>>(optim::rmsprop_options{.lr = 0.01, .momentum = 0.5});
  }
  SUBCASE("Adagrad") { check_resume<optim::adagrad<double, cpu>>(optim::adagrad_options{.lr = 0.1}); }
  temp_dir d;
  params_t p = small_model().init(3);
  optim::adam<double, cpu> opt;
  train(p, opt, 0, 2);
  nn::save_parameters(d.path / "ck.npz", p, opt);
  const npz_archive z(d.path / "ck.npz");
  CHECK(z.contains("optimizer.adam.steps"));
  CHECK(z.contains("optimizer.adam.1.0.weight"));
  CHECK(z.load<std::int64_t>("optimizer.adam.steps").item() == 2);
  CHECK(host(z.load<double>("optimizer.adam.0.2.bias")) == host(opt.state()[0][2]));  // map order: 0.bias 0.weight 2.bias
}

TEST_CASE("a checkpoint that does not fit is a typed error, and changes nothing") {
  temp_dir d;
  const auto model = small_model();
  params_t p = model.init(1);
  optim::adam<double, cpu> adam;
  train(p, adam, 0, 3);
  nn::save_parameters(d.path / "adam.npz", p, adam);
  nn::save_parameters(d.path / "plain.npz", p);

  params_t q = model.init(9);
  const std::vector<double> before = host(q.at("0.weight"));
  // another model: a missing parameter and an unexpected one, by name
  params_t bigger = nn::sequential<double, cpu>(nn::linear(4, 3), nn::relu, nn::linear(3, 2), nn::relu, nn::linear(2, 1)).init(1);
  CHECK_THROWS_WITH_AS(nn::load_parameters(d.path / "plain.npz", bigger), doctest::Contains("missing '4.bias', '4.weight'"),
                       io_error);
  params_t fewer = nn::sequential<double, cpu>(nn::linear(4, 3)).init(1);
  CHECK_THROWS_WITH_AS(nn::load_parameters(d.path / "plain.npz", fewer), doctest::Contains("unexpected '2.bias', '2.weight'"),
                       io_error);
  // the same names with other shapes
  params_t wider = nn::sequential<double, cpu>(nn::linear(4, 5), nn::relu, nn::linear(5, 2)).init(1);
  CHECK_THROWS_WITH_AS(nn::load_parameters(d.path / "plain.npz", wider),
                       doctest::Contains(("'0.bias' in '" + (d.path / "plain.npz").string() + "' has shape (3,), expected (5,)").c_str()),
                       shape_error);
  // another element type
  auto qf = nn::sequential<float, cpu>(nn::linear(4, 3), nn::relu, nn::linear(3, 2)).init(1);
  CHECK_THROWS_AS(nn::load_parameters(d.path / "plain.npz", qf), dtype_error);
  // optimizer state that is not there, or of another optimizer
  optim::adam<double, cpu> fresh;
  CHECK_THROWS_WITH_AS(nn::load_parameters(d.path / "plain.npz", q, fresh),
                       doctest::Contains("no state of the optimizer 'adam'"), io_error);
  optim::sgd<double, cpu> sgd({.lr = 0.1, .momentum = 0.9});
  CHECK_THROWS_WITH_AS(nn::load_parameters(d.path / "adam.npz", q, sgd), doctest::Contains("no state of the optimizer 'sgd'"),
                       io_error);
  CHECK(fresh.steps() == 0);
  CHECK(fresh.state().empty());
  CHECK(host(q.at("0.weight")) == before);  // nothing was changed by the failed loads
  // the parameters alone load from a checkpoint that also holds an optimizer's state
  nn::load_parameters(d.path / "adam.npz", q);
  CHECK(host(q.at("0.weight")) == host(p.at("0.weight")));
  // a state that the optimizer's options do not use: the next step says so
  optim::sgd<double, cpu> momentum({.lr = 0.1, .momentum = 0.9});
  train(p, momentum, 0, 1);
  nn::save_parameters(d.path / "sgd.npz", p, momentum);
  optim::sgd<double, cpu> no_momentum({.lr = 0.1});
  nn::load_parameters(d.path / "sgd.npz", q, no_momentum);
  CHECK_THROWS_WITH_AS(train(q, no_momentum, 0, 1), doctest::Contains("its state has 1 slots, where its options need 0"),
                       value_error);
  // names the checkpoint keeps for the optimizer
  params_t odd;
  odd.emplace("optimizer.x", full<double>(extents{2}, 1.0));
  CHECK_THROWS_WITH_AS(nn::save_parameters(d.path / "odd.npz", odd), doctest::Contains("starts with 'optimizer.'"), value_error);
  // load_state checks what it is given
  optim::adam<double, cpu> a2;
  CHECK_THROWS_AS(a2.load_state(-1, {}), value_error);
  std::vector<std::vector<array<double>>> uneven(2);
  uneven[0].push_back(zeros<double>(extents{2}));
  CHECK_THROWS_WITH_AS(a2.load_state(1, std::move(uneven)), doctest::Contains("slot 1"), value_error);
}
