// The backend-generic core bodies (tests/generic/core_body.hpp) on the cuda backend, plus what
// only a device has: one kernel per statement, and the same numbers as the cpu backend.
#include <fusor/cuda.cuh>
#define TEST_BACKEND fusor::cuda
#include "generic/core_body.hpp"
#include "generic/numpy_body.hpp"  // statistics, partition, more elementwise functions
#include "generic/decomp_body.hpp"  // fusor::linalg over cuSOLVER

namespace {
/// The largest difference between a device result and the cpu's, relative to the cpu result's
/// largest magnitude (absolute below 1).
template <class G, class W>
double err(const G& got, const W& want) {
  return double(max(abs(to<cpu>(got) - want))) / std::max(1.0, double(max(abs(want))));
}
}  // namespace

TEST_CASE("one kernel launch per statement, and none for a transfer") {
  const index_t n = 1 << 20;
  auto x = body::dev(test::values<float>(n, -1, 1, 1)), y = body::dev(test::values<float>(n, -1, 1, 2)),
       z = body::dev(test::values<float>(n, -1, 1, 3)), w = body::dev(test::values<float>(n, -1, 1, 4));
  array<float, fusor::cuda> r(extents{n});
  instrument::kernel_launches = 0;
  instrument::allocations = 0;
  r = 2.0f * x + y * z - sin(w);
  CHECK(instrument::kernel_launches == 1);
  CHECK(instrument::allocations == 0);
  // a deep tree with broadcasting and a strided operand is still one kernel
  auto m = body::dev(test::values<float>(512 * 512, -1, 1, 5), {512, 512});
  auto row = body::dev(test::values<float>(512, -1, 1, 6), {512});
  array<float, fusor::cuda> q(extents{512, 512});
  instrument::kernel_launches = 0;
  q = where(m > row, exp(m) * row + transpose(m), abs(m - row) / (1.0f + m * m)) + cos(transpose(m)) * 0.5f;
  CHECK(instrument::kernel_launches == 1);
  instrument::kernel_launches = 0;
  const float s = sum(x * y);
  CHECK(instrument::kernel_launches == 1);
  const auto hx = body::host_values(x), hy = body::host_values(y);
  double ref = 0;
  for (std::size_t i = 0; i < hx.size(); ++i) ref += double(hx[i]) * double(hy[i]);
  CHECK(test::close(double(s), ref, 1e-5));
  instrument::kernel_launches = 0;
  const auto back = to<cpu>(x);
  CHECK(instrument::kernel_launches == 0);
}

TEST_CASE("cuda and cpu give the same numbers on the same seeded inputs") {
  random::generator gc(7), gd(7);
  const auto ic = random::integers<std::int32_t>(gc, {300'001}, -1000, 1000);
  const auto id = random::integers<std::int32_t, fusor::cuda>(gd, {300'001}, -1000, 1000);
  CHECK(fusor::all(to<cpu>(id) == ic));  // integers: exact
  const auto uc = random::uniform<double>(gc, {300'001});
  const auto ud = random::uniform<double, fusor::cuda>(gd, {300'001});
  CHECK(fusor::all(to<cpu>(ud) == uc));  // uniforms are exact scalings of the same bits
  const auto nc = random::normal<float>(gc, {300'001});
  const auto nd = random::normal<float, fusor::cuda>(gd, {300'001});
  // Box-Muller's log/sqrt/cos differ by an ulp or two between the host and device libraries
  CHECK(max(abs(to<cpu>(nd) - nc)) <= 8 * std::numeric_limits<float>::epsilon() * 6);
  // the same fused statement on both backends: within a few ulps (device math library)
  const auto ec = eval(2.0f * uc.astype<float>() + nc * nc - sin(nc));
  const auto ed = to<cpu>(eval(2.0f * ud.astype<float>() + nd * nd - sin(nd)));
  CHECK(max(abs(ed - ec) / maximum(abs(ec), 1.0f)) <= 16 * std::numeric_limits<float>::epsilon());
  CHECK(std::abs(sum(ud) - sum(uc)) <= 1e-9 * 300'001);
}

TEST_CASE("cuda errors name the call and the sizes") {
  try {
    array<float, fusor::cuda> huge(extents{index_t(1) << 45});  // 128 TiB
    FAIL("allocating 128 TiB should fail");
  } catch (const cuda_error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("cudaMallocAsync") != std::string::npos);
    CHECK(msg.find("requested 140737488355328 bytes") != std::string::npos);
    if (e.status() == int(cudaErrorMemoryAllocation)) CHECK(msg.find("free of") != std::string::npos);
    CHECK(e.call() == "cudaMallocAsync");
  }
  CHECK_THROWS_WITH_AS(set_cuda_device(cuda_device_count()), doctest::Contains("needs a device number in [0, "),
                       cuda_error);
  auto a = zeros<float, fusor::cuda>({3, 4});
  CHECK_THROWS_WITH_AS((a = a + zeros<float, fusor::cuda>({4, 3})), doctest::Contains("(3, 4)"), shape_error);
}

TEST_CASE("cuFFT transforms give the cpu's (FFTW's) spectra, for every layout") {
  random::generator g(11);
  const auto xc = random::normal<float>(g, {6, 40, 33});
  const auto xd = to<fusor::cuda>(xc);
  const double tol = 1e-5;
  CHECK(err(fft::fft(xd), fft::fft(xc)) < tol);                              // batched over two axes
  CHECK(err(fft::fft(xd, -1, 0), fft::fft(xc, -1, 0)) < tol);                // along the outer axis
  CHECK(err(fft::rfftn(xd), fft::rfftn(xc)) < tol);                          // 3-d real
  CHECK(err(fft::fft2(transpose(xd)), fft::fft2(transpose(xc))) < tol);       // a transposed input (packed)
  CHECK(err(fft::rfft(xd(fusor::all, range(0, 40, 3), fusor::all)), fft::rfft(xc(fusor::all, range(0, 40, 3), fusor::all))) < tol);
  CHECK(err(fft::irfftn(fft::rfftn(xd), {6, 40, 33}), xc) < tol);            // round trip (odd last length)
  CHECK(err(fft::ifft(fft::fft(xd, -1, 1), -1, 1), xc.astype<std::complex<float>>()) < tol);
  const auto dd = to<fusor::cuda>(random::normal<double>(g, {64, 48}));
  const auto dc = to<cpu>(dd);
  CHECK(err(fft::fftn(dd), fft::fftn(dc)) < 1e-12);
  CHECK(err(fft::fftconvolve(dd, dd(range(0, 9), range(0, 7)), fft::conv_mode::same),
            fft::fftconvolve(dc, dc(range(0, 9), range(0, 7)), fft::conv_mode::same)) < 1e-12);
  CHECK_THROWS_AS(fft::fftn(to<fusor::cuda>(zeros<float>({2, 2, 2, 2}))), fft_error);
  const auto stats = fft::plan_cache_info<fusor::cuda>();
  CHECK(stats.misses > 0);
}

TEST_CASE("cuFFT: real rows that start off a complex boundary, and one-point transforms") {
  // cuFFT refuses a real side whose start is not 8-byte aligned (float), and gives wrong values for
  // a one-point transform with a batch distance: both must still give FFTW's values
  random::generator g(12);
  const auto xc = random::normal<float>(g, {5, 9, 7});
  const auto xd = to<fusor::cuda>(xc);
  const double tol = 1e-5;
  CHECK(err(fft::rfft(xd(fusor::all, 1, fusor::all)), fft::rfft(xc(fusor::all, 1, fusor::all))) < tol);  // starts at 7
  CHECK(err(fft::rfft(xd(2, 3, fusor::all)), fft::rfft(xc(2, 3, fusor::all))) < tol);                    // one odd row
  // a host-looped outer batch axis with an odd stride (63): every other batch starts off the boundary
  CHECK(err(fft::rfft(xd(fusor::all, range(0, 9, 2), fusor::all)), fft::rfft(xc(fusor::all, range(0, 9, 2), fusor::all))) < tol);
  const auto spec = fft::rfft(xc(fusor::all, 1, fusor::all));  // (5, 4)
  array<float, fusor::cuda> outd = zeros<float, fusor::cuda>({5, 9, 7});
  array<float> outc = zeros<float>({5, 9, 7});
  fft::irfftn_into(outd(fusor::all, 3, fusor::all), to<fusor::cuda>(spec), {7}, {1});  // written at offset 21
  fft::irfftn_into(outc(fusor::all, 3, fusor::all), spec, {7}, {1});
  CHECK(err(outd, outc) < tol);
  // one point along the transformed axis, rows 7 apart: the identity (r2c, c2r, c2c)
  const auto col_d = xd(fusor::all, fusor::all, range(0, 1));
  const auto col_c = xc(fusor::all, fusor::all, range(0, 1));
  CHECK(err(fft::rfft(col_d), fft::rfft(col_c)) < tol);
  CHECK(err(fft::fft(col_d), fft::fft(col_c)) < tol);
  CHECK(err(fft::irfft(fft::rfft(col_d), 1), col_c) < tol);
  CHECK(err(fft::rfftn(xd(range(0, 1), range(2, 3), range(4, 5))), fft::rfftn(xc(range(0, 1), range(2, 3), range(4, 5)))) < tol);
}

TEST_CASE("cuFFT into caller buffers, on an explicit stream, allocates nothing and gives FFTW's values") {
  random::generator g(12);
  const auto xc = random::normal<float>(g, {8, 30, 20});
  const auto xd = to<fusor::cuda>(xc);
  array<std::complex<float>, fusor::cuda> spectrum(extents{8, 30, 11});
  array<float, fusor::cuda> back(extents{8, 30, 20});
  cuda_stream stream;
  fft::rfftn_into(on(stream), spectrum, xd);  // plans are made on first use
  instrument::allocations = 0;
  fft::rfftn_into(on(stream), spectrum, xd, {}, {}, fft::norm_mode::ortho);
  fft::irfftn_into(on(stream), back, spectrum, {8, 30, 20}, {}, fft::norm_mode::ortho, fft::input_use::overwrite);
  CHECK(instrument::allocations == 0);
  {
    cuda_stream_scope scope(stream);
    cuda_synchronize();
  }
  CHECK(double(max(abs(to<cpu>(back) - xc))) < 1e-4);
  const auto want = fft::rfftn(xc, {}, {}, fft::norm_mode::ortho);
  fft::rfftn_into(spectrum, xd, {}, {}, fft::norm_mode::ortho);  // the thread's current stream
  CHECK(double(max(abs(to<cpu>(spectrum) - want))) < 1e-4 * std::max(1.0, double(max(abs(want)))));
}

TEST_CASE("cuBLAS products give the cpu's (CBLAS's), transposed and batched operands included") {
  random::generator g(5);
  const auto a = random::normal<float>(g, {65, 33}), b = random::normal<float>(g, {33, 47});
  const auto da = to<fusor::cuda>(a), db = to<fusor::cuda>(b);
  CHECK(err(matmul(da, db), matmul(a, b)) < 1e-5);
  CHECK(err(matmul(transpose(db), transpose(da)), matmul(transpose(b), transpose(a))) < 1e-5);
  const auto ba = random::normal<double>(g, {4, 17, 9}), bb = random::normal<double>(g, {9, 5});
  CHECK(err(matmul(to<fusor::cuda>(ba), to<fusor::cuda>(bb)), matmul(ba, bb)) < 1e-12);  // batched, broadcast
  const auto v = random::normal<double>(g, {9});
  CHECK(err(matmul(to<fusor::cuda>(ba), to<fusor::cuda>(v)), matmul(ba, v)) < 1e-12);    // matrix-vector
  CHECK(std::abs(vdot(to<fusor::cuda>(v), to<fusor::cuda>(v)) - vdot(v, v)) < 1e-12);
  CHECK(std::abs(matmul(to<fusor::cuda>(v), to<fusor::cuda>(v)).item() - matmul(v, v).item()) < 1e-12);  // 1x1: dotu
  CHECK(fusor::any(to<fusor::cuda>(array<bool>{false, true})));  // a 1-byte accumulator beside the ticket
  const auto ia = random::integers<std::int32_t>(g, {7, 11}, -50, 50), ib = random::integers<std::int32_t>(g, {11, 3}, -50, 50);
  CHECK(fusor::all(to<cpu>(matmul(to<fusor::cuda>(ia), to<fusor::cuda>(ib))) == matmul(ia, ib)));  // exact
  // an array, not `auto`: the product of a temporary array is a lazy expression that would read
  // the temporary after it died
  const array<std::complex<float>> ca = random::normal<float>(g, {8, 8}).astype<std::complex<float>>() * std::complex<float>(0.5f, 1.0f);
  CHECK(err(matmul(to<fusor::cuda>(ca), to<fusor::cuda>(ca)), matmul(ca, ca)) < 1e-5);
}

TEST_CASE(".npy files: device arrays are saved and loaded through one host transfer") {
  random::generator g(3);
  const auto h = random::normal<double>(g, {5, 7});
  const auto d = to<fusor::cuda>(h);
  CHECK(to_npy_bytes(d) == to_npy_bytes(h));             // byte-identical to the host array's file
  CHECK(to_npy_bytes(transpose(d)) == to_npy_bytes(transpose(h)));
  const auto bytes = to_npy_bytes(h);
  const auto back = load_npy_bytes<double, fusor::cuda>(std::span<const std::byte>(bytes.data(), bytes.size()));
  CHECK(fusor::all(to<cpu>(back) == h));
}

TEST_CASE("sorting, indexing and scans on the device give the cpu's results") {
  random::generator g(9);
  auto hf = random::normal<float>(g, {5, 301});
  hf(2, 7) = std::nanf("");
  hf(0, 3) = hf(0, 4);  // a tie
  const auto df = to<fusor::cuda>(hf);
  CHECK(fusor::all(to<cpu>(sort(df, 1)) == sort(hf, 1) || (isnan(to<cpu>(sort(df, 1))) && isnan(sort(hf, 1)))));
  CHECK(fusor::all(to<cpu>(argsort(df, 1)) == argsort(hf, 1)));
  const auto [tv, ti] = topk(df, 7);
  const auto [cv, ci] = topk(hf, 7);
  CHECK(fusor::all(to<cpu>(ti) == ci));
  const auto hi = random::integers<std::int32_t>(g, {1000}, -20, 20);
  const auto di = to<fusor::cuda>(hi);
  const auto du = unique(di);
  const auto cu = unique(hi);
  CHECK(fusor::all(to<cpu>(du.values) == cu.values));
  CHECK(fusor::all(to<cpu>(du.counts) == cu.counts));
  CHECK(fusor::all(to<cpu>(du.inverse) == cu.inverse));
  CHECK(fusor::all(to<cpu>(cumsum(di)) == cumsum(hi)));
  CHECK(fusor::all(abs(to<cpu>(cumsum(to<fusor::cuda>(hf), 1)) - cumsum(hf, 1)) <= 1e-4f || isnan(cumsum(hf, 1))));
  const auto idx = to<fusor::cuda>(array<std::int64_t>{4, -1, 0, 4});
  CHECK(fusor::all(to<cpu>(take(df, idx, 1)) == take(hf, array<std::int64_t>{4, -1, 0, 4}, 1) ||
                   isnan(take(hf, array<std::int64_t>{4, -1, 0, 4}, 1))));
  auto dz = zeros<std::int32_t, fusor::cuda>({6});
  scatter_add(dz, to<fusor::cuda>(array<std::int64_t>{1, 1, 5}), to<fusor::cuda>(array<std::int32_t>{2, 3, 4}), 0);
  CHECK(fusor::all(to<cpu>(dz) == array<std::int32_t>{0, 5, 0, 0, 0, 4}));
  CHECK_THROWS_WITH_AS(take(df, to<fusor::cuda>(array<std::int64_t>{0, 400}), 1), doctest::Contains("index 400"), index_error);
  CHECK(count_nonzero(di) == count_nonzero(hi));
  CHECK(fusor::all(to<cpu>(mask_select(di, di > 3)) == mask_select(hi, hi > 3)));
  CHECK(searchsorted(to<fusor::cuda>(cu.values), 3) == searchsorted(cu.values, 3));
  CHECK(fusor::all(to<cpu>(bincount(di + 20)) == bincount(hi + 20)));
}
