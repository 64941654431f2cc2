// Linear algebra against plain loops in double / complex<double> (independent of BLAS): matmul
// for every element type at SIMD-edge and odd sizes, batched and broadcast, 1-d operands,
// transposed and padded views read without a copy, copied layouts, expression operands, the
// fused consumer, the out form; dot/vdot/inner/outer/tensordot/trace/einsum/matrix_norm; and
// each error's type and message.
#include "common.hpp"

#include <string>
#include <vector>

using namespace fusor;
using test::index_t;

namespace {

template <class T>
using ref_t = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;

template <class T>
ref_t<T> to_ref(const T& x) {
  if constexpr (is_complex_v<T>) return {double(x.real()), double(x.imag())};
  else return double(x);
}

/// Tolerance for a sum of k products: relative 1e-5 k (float), 1e-12 k (double), exact (integers).
template <class T>
double tol(index_t k) {
  using R = real_t<T>;
  const double kk = double(std::max<index_t>(k, 1));
  if constexpr (std::is_same_v<R, float>) return 1e-5 * kk;
  else if constexpr (std::is_same_v<R, double>) return 1e-12 * kk;
  else return 0;
}

template <class T>
array<T> make(const std::vector<T>& v, const extents& shape) {
  return array<T>(std::span<const T>(v.data(), v.size()), shape);
}
template <class T>
std::vector<ref_t<T>> refs(const std::vector<T>& v) {
  std::vector<ref_t<T>> r;
  for (const T& x : v) r.push_back(to_ref(x));
  return r;
}

/// Every element of a (contiguous, C order) against want.
template <class T, class R>
void check_all(const array<T>& got, const extents& shape, const std::vector<R>& want, double tolerance) {
  REQUIRE(got.shape() == shape);
  REQUIRE(std::size_t(got.size()) == want.size());
  int bad = 0;
  for (index_t i = 0; i < got.size(); ++i) {
    const auto g = to_ref(got.data()[i]);
    const R w = want[std::size_t(i)];
    bool ok;
    if constexpr (std::is_integral_v<T>) ok = R(g) == w;
    else ok = test::close(R(g), w, tolerance);
    if (!ok && ++bad <= 5) {
      INFO("element ", i, " of shape ", to_string(shape));
      CHECK(R(g) == w);
    }
  }
  CHECK(bad == 0);
}

/// NumPy's matmul with plain loops on contiguous row-major data.
template <class R>
std::vector<R> ref_matmul(const std::vector<R>& a, extents sa, const std::vector<R>& b, extents sb, extents& out) {
  const bool av = sa.size() == 1, bv = sb.size() == 1;
  if (av) sa = extents{index_t(1), sa[0]};
  if (bv) sb = extents{sb[0], index_t(1)};
  const int ra = sa.size(), rb = sb.size(), nb = std::max(ra, rb) - 2;
  const index_t m = sa[ra - 2], k = sa[ra - 1], n = sb[rb - 1];
  extents batch;
  for (int d = 0; d < nb; ++d) {
    const int ia = d - (nb - (ra - 2)), ib = d - (nb - (rb - 2));
    const index_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
    batch.push_back(da == 1 ? db : da);
  }
  out = batch;
  if (!av) out.push_back(m);
  if (!bv) out.push_back(n);
  std::vector<R> c(std::size_t(batch.numel() * m * n));
  std::vector<index_t> idx(std::size_t(nb), 0);
  for (index_t t = 0; t < batch.numel(); ++t) {
    index_t rem = t;
    for (int d = nb - 1; d >= 0; --d) {
      idx[std::size_t(d)] = rem % batch[d];
      rem /= batch[d];
    }
    index_t oa = 0, ob = 0;
    for (int d = 0; d < nb; ++d) {
      const int ia = d - (nb - (ra - 2)), ib = d - (nb - (rb - 2));
      if (ia >= 0) oa = oa * sa[ia] + (sa[ia] == 1 ? 0 : idx[std::size_t(d)]);
      if (ib >= 0) ob = ob * sb[ib] + (sb[ib] == 1 ? 0 : idx[std::size_t(d)]);
    }
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < n; ++j) {
        R s = 0;
        for (index_t p = 0; p < k; ++p) s += a[std::size_t(oa * m * k + i * k + p)] * b[std::size_t(ob * k * n + p * n + j)];
        c[std::size_t(t * m * n + i * n + j)] = s;
      }
  }
  return c;
}

/// Reads any array or view element by element into C order (plain loops, no fusor evaluation).
template <class T>
std::vector<ref_t<T>> flat_refs(const array_view<T>& v) {
  std::vector<ref_t<T>> r;
  const int n = v.ndim();
  std::vector<index_t> idx(std::size_t(n), 0);
  for (index_t t = 0; t < v.size(); ++t) {
    index_t off = 0;
    for (int d = 0; d < n; ++d) off += idx[std::size_t(d)] * v.strides()[d];
    r.push_back(to_ref(v.data()[off]));
    for (int d = n - 1; d >= 0; --d) {
      if (++idx[std::size_t(d)] < v.shape()[d]) break;
      idx[std::size_t(d)] = 0;
    }
  }
  return r;
}

template <class T>
void check_matmul(const extents& sa, const extents& sb, std::uint64_t seed) {
  const auto va = test::values<T>(sa.numel(), -1, 1, seed), vb = test::values<T>(sb.numel(), -1, 1, seed + 7);
  const auto vi = test::values<T>(sa.numel(), -9, 9, seed), vj = test::values<T>(sb.numel(), -9, 9, seed + 7);
  const auto& xa = std::is_integral_v<T> ? vi : va;
  const auto& xb = std::is_integral_v<T> ? vj : vb;
  auto a = make(xa, sa);
  auto b = make(xb, sb);
  extents out;
  const auto want = ref_matmul(refs(xa), sa, refs(xb), sb, out);
  INFO("matmul ", to_string(sa), " @ ", to_string(sb), " dtype ", dtype_name<T>());
  const array<T> c = matmul(a, b);
  check_all(c, out, want, tol<T>(sa[sa.size() - 1]));
}

}  // namespace

TEST_CASE_TEMPLATE("matmul matches a triple loop at SIMD edge and odd sizes", T, float, double, std::complex<float>,
                   std::complex<double>, std::int32_t, std::int64_t) {
  const index_t sizes[] = {0, 1, 7, 8, 9};
  std::uint64_t seed = 1;
  for (index_t m : sizes)
    for (index_t k : sizes)
      for (index_t n : sizes) check_matmul<T>(extents{m, k}, extents{k, n}, seed++);
  check_matmul<T>(extents{33, 17}, extents{17, 65}, 99);
  check_matmul<T>(extents{65, 33}, extents{33, 17}, 98);
}

TEST_CASE_TEMPLATE("batched and broadcast matmul, and 1-d operands", T, float, double, std::complex<double>,
                   std::int32_t) {
  check_matmul<T>(extents{4, 5, 6}, extents{4, 6, 3}, 1);     // batch with batch
  check_matmul<T>(extents{4, 5, 6}, extents{6, 3}, 2);        // stack times one matrix
  check_matmul<T>(extents{1, 5, 6}, extents{3, 6, 7}, 3);     // broadcast batch of a
  check_matmul<T>(extents{2, 1, 5, 6}, extents{3, 6, 2}, 4);  // (2,1) with (3,) -> (2,3)
  check_matmul<T>(extents{3, 5, 6}, extents{1, 6, 2}, 5);
  check_matmul<T>(extents{6}, extents{6, 4}, 6);               // row vector
  check_matmul<T>(extents{5, 6}, extents{6}, 7);               // column vector
  check_matmul<T>(extents{9}, extents{9}, 8);                  // inner product, a 0-d array
  check_matmul<T>(extents{6}, extents{3, 6, 4}, 9);            // vector times a stack
  check_matmul<T>(extents{3, 5, 6}, extents{6}, 10);           // stack times a vector
  check_matmul<T>(extents{0, 5, 6}, extents{6, 2}, 11);        // empty batch
  check_matmul<T>(extents{2, 5, 0}, extents{2, 0, 3}, 12);     // K = 0: zeros
  check_matmul<T>(extents{1}, extents{1}, 13);
}

// ---- float16 and bfloat16: products accumulate in float32 and round once ---------------------

namespace {
/// |got - want| <= half an ulp of H at want (the one rounding) + float32's accumulation bound
/// 2^-22 k sum |a||b| (4 units of float32's epsilon per term, for any summation order).
template <class H>
void check_half_product(const array_view<H>& got, const std::vector<double>& want, const std::vector<double>& mags,
                        index_t k) {
  const double half_ulp = std::is_same_v<H, fusor::float16> ? 0x1p-11 : 0x1p-8;
  REQUIRE(std::size_t(got.size()) == want.size());
  const auto g = flat_refs(got);
  int bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double bound = half_ulp * std::abs(want[i]) + 0x1p-22 * double(k) * mags[i];
    if (!(std::abs(g[i] - want[i]) <= bound) && ++bad <= 5) CHECK_MESSAGE(false, "element ", i, ": ", g[i], " vs ", want[i]);
  }
  CHECK(bad == 0);
}
template <class H>
void check_half_matmul(const extents& sa, const extents& sb, std::uint64_t seed, bool transposed = false) {
  const auto va = test::values<H>(sa.numel(), -2, 2, seed), vb = test::values<H>(sb.numel(), -2, 2, seed + 7);
  std::vector<double> ra = refs(va), rb = refs(vb), aa, ab;
  for (double x : ra) aa.push_back(std::abs(x));
  for (double x : rb) ab.push_back(std::abs(x));
  extents out;
  const auto want = ref_matmul(ra, sa, rb, sb, out), mags = ref_matmul(aa, sa, ab, sb, out);
  const index_t k = sa[sa.size() - 1];
  INFO("matmul ", to_string(sa), " @ ", to_string(sb), " dtype ", dtype_name<H>(), transposed ? " (b transposed)" : "");
  const auto a = make(va, sa);
  if (!transposed) {
    const array<H> c = matmul(a, make(vb, sb));
    CHECK(c.shape() == out);
    check_half_product<H>(c.view(), want, mags, k);
  } else {  // b stored as its transpose and read through a transposed view (CblasTrans)
    const extents st{sb[1], sb[0]};
    array<H> bt(st);
    for (index_t p = 0; p < sb[0]; ++p)
      for (index_t j = 0; j < sb[1]; ++j) bt.data()[j * sb[0] + p] = vb[std::size_t(p * sb[1] + j)];
    const array<H> c = matmul(a, array_view<H>(bt.data(), sb, extents{index_t(1), sb[0]}));
    check_half_product<H>(c.view(), want, mags, k);
  }
}
}  // namespace

TEST_CASE_TEMPLATE("float16 and bfloat16 products accumulate in float32 and round once", H, fusor::float16,
                   fusor::bfloat16) {
  // sizes at float32's SIMD edges, K across the 512-wide panels the cpu widens (512, 1100)
  const index_t sizes[] = {0, 1, 15, 17};
  std::uint64_t seed = 1;
  for (index_t m : sizes)
    for (index_t k : sizes) check_half_matmul<H>(extents{m, k}, extents{k, 16}, seed++);
  check_half_matmul<H>(extents{7, 512}, extents{512, 9}, 50);
  check_half_matmul<H>(extents{5, 1100}, extents{1100, 3}, 51);
  check_half_matmul<H>(extents{33, 1100}, extents{1100, 21}, 52, true);
  check_half_matmul<H>(extents{2, 1, 5, 6}, extents{3, 6, 2}, 53);  // broadcast batches
  check_half_matmul<H>(extents{6}, extents{6, 4}, 54);              // gemv, both ways
  check_half_matmul<H>(extents{5, 1100}, extents{1100}, 55);
  check_half_matmul<H>(extents{1100}, extents{1100}, 56);           // dot through matmul

  // a half accumulator stops growing at 2^11 (float16) or 2^8 (bfloat16): 3000 ones sum to 3000
  // in float32, rounded once (3008 in bfloat16)
  const array<H> ones_row = ones<H>(extents{3, 3000}), ones_col = ones<H>(extents{3000, 2});
  const H want = H(3000.0f);
  const array<H> c = matmul(ones_row, ones_col);
  for (index_t i = 0; i < c.size(); ++i) CHECK(float(c.data()[i]) == float(want));
  const array<H> v = ones<H>(extents{3000}), strided_v = ones<H>(extents{6000});
  CHECK(float(dot(v, v).item()) == float(want));
  CHECK(float(vdot(v, v)) == float(want));
  CHECK(float(inner(v, v).item()) == float(want));
  CHECK(float(matmul(ones_row, strided_v(range(0, 6000, 2))).data()[1]) == float(want));  // gemv, stride 2
  CHECK(float(einsum("ij,jk->ik", ones_row, ones_col).data()[0]) == float(want));
  CHECK(float(tensordot(ones_row, ones_col, 1).data()[5]) == float(want));

  // a product is kept in float32 before the sum: (1 + e)^2 - (1 + 2e) is e^2 (e = H's epsilon),
  // where products rounded to H would cancel to 0
  const float e = std::is_same_v<H, fusor::float16> ? 0x1p-10f : 0x1p-7f;
  const array<H> x = make(std::vector<H>{H(1 + e), H(-(1 + 2 * e))}, extents{2});
  const array<H> y = make(std::vector<H>{H(1 + e), H(1.0f)}, extents{2});
  CHECK(float(dot(x, y).item()) == e * e);
  CHECK(float(vdot(x, y)) == e * e);
  CHECK(float(matmul(x.reshape(extents{1, 2}), y).data()[0]) == e * e);

  // mixed with float32 the product is float32's
  static_assert(std::is_same_v<value_t<decltype(matmul(ones_row, ones<float>(extents{3000, 2})))>, float>);
  CHECK_THROWS_AS(matmul(ones_row, ones<H>(extents{2999, 2})), shape_error);
}

TEST_CASE("matmul makes one BLAS call per batch matrix, one for a stack times a matrix") {
  const auto va = test::values<float>(4 * 5 * 6, -1, 1, 1), vb = test::values<float>(4 * 6 * 3, -1, 1, 2);
  auto a = make(va, {4, 5, 6});
  auto b = make(vb, {4, 6, 3});
  auto b1 = make(std::vector<float>(vb.begin(), vb.begin() + 18), {6, 3});
  instrument::blas_calls = 0;
  (void)matmul(a, b);
  CHECK(instrument::blas_calls == 4);
  instrument::blas_calls = 0;
  (void)matmul(a, b1);
  CHECK(instrument::blas_calls == 1);
  // a broadcast batch reuses one matrix for every call
  auto a1 = make(std::vector<float>(va.begin(), va.begin() + 30), {1, 5, 6});
  instrument::reset();
  instrument::blas_calls = 0;
  const array<float> c = matmul(a1, b);
  CHECK(instrument::blas_calls == 4);
  CHECK(instrument::allocations == 1);
  CHECK(c.shape() == extents{4, 5, 3});
}

TEST_CASE_TEMPLATE("transposed and padded views go to BLAS as they lie; other layouts are copied once", T, float,
                   double, std::complex<float>, std::int64_t) {
  const index_t m = 9, k = 7, n = 8;
  const auto sa = test::values<T>(k * m, -3, 3, 1), sb = test::values<T>(n * k, -3, 3, 2);
  const auto pad = test::values<T>(m * 12, -3, 3, 3);
  auto as = make(sa, {k, m});   // storage of a^T
  auto bs = make(sb, {n, k});   // storage of b^T
  auto ps = make(pad, {m, 12}); // a (m, k) window of a wider matrix: row stride 12
  const array_view<T> at(as.data(), {m, k}, {1, m});  // a = as^T, strides (1, ld)
  const array_view<T> bt(bs.data(), {k, n}, {1, k});
  const array_view<T> pw(ps.data() + 2, {m, k}, {12, 1});
  const auto ra = flat_refs(at), rb = flat_refs(bt), rp = flat_refs(pw);
  extents out;
  const auto want_ab = ref_matmul(ra, {m, k}, rb, {k, n}, out);
  const auto want_pb = ref_matmul(rp, {m, k}, rb, {k, n}, out);
  const double t = tol<T>(k);

  instrument::reset();
  array<T> c = matmul(at, bt);
  CHECK(instrument::allocations == 1);  // the result only: no copy of either operand
  check_all(c, {m, n}, want_ab, t);
  // the same through the core's transpose(): a view, so still no copy
  instrument::reset();
  c = matmul(transpose(as), transpose(bs));
  CHECK(instrument::allocations == 1);
  check_all(c, {m, n}, want_ab, t);
  instrument::reset();
  c = matmul(pw, bt);
  CHECK(instrument::allocations == 1);
  check_all(c, {m, n}, want_pb, t);

  // a vector with a stride is a transposed 1 x k matrix: no copy either
  const array_view<T> col(as.data(), {k}, {m});  // column 0 of as
  const auto rc = flat_refs(col);
  instrument::reset();
  array<T> v = matmul(col, bt);
  CHECK(instrument::allocations == 1);
  check_all(v, {n}, ref_matmul(rc, {k}, rb, {k, n}, out), t);

  // reversed rows and every other column: copied once, same numbers
  const array_view<T> rev(ps.data() + (m - 1) * 12, {m, k}, {-12, 1});
  const array_view<T> skip(ps.data(), {m, 6}, {12, 2});
  const auto rr = flat_refs(rev), rs = flat_refs(skip);
  instrument::reset();
  c = matmul(rev, bt);
  CHECK(instrument::allocations == 2);  // the copy and the result
  check_all(c, {m, n}, ref_matmul(rr, {m, k}, rb, {k, n}, out), t);
  auto b6 = make(test::values<T>(6 * n, -3, 3, 4), {6, n});
  c = matmul(skip, b6);
  check_all(c, {m, n}, ref_matmul(rs, {m, 6}, refs(test::values<T>(6 * n, -3, 3, 4)), {6, n}, out), tol<T>(6));
}

TEST_CASE("expression and mixed-type operands; matmul as a fusion barrier") {
  const index_t m = 17, k = 33, n = 9;
  const auto va = test::values<float>(m * k, -1, 1, 1), vb = test::values<float>(k * n, -1, 1, 2);
  const auto vbias = test::values<float>(n, -1, 1, 3);
  auto a = make(va, {m, k});
  auto b = make(vb, {k, n});
  auto bias = make(vbias, {n});
  extents out;
  auto ra = refs(va);
  const auto plain = ref_matmul(ra, {m, k}, refs(vb), {k, n}, out);

  // an expression operand is evaluated once into a temporary
  for (auto& x : ra) x *= 2;
  instrument::reset();
  array<float> c = matmul(a * 2, b);
  CHECK(instrument::allocations == 2);
  check_all(c, {m, n}, ref_matmul(ra, {m, k}, refs(vb), {k, n}, out), tol<float>(k));

  // relu(x @ w + bias): one GEMM, one fused pass, the product's buffer and the result
  instrument::reset();
  instrument::blas_calls = 0;
  array<float> y = maximum(matmul(a, b) + bias, 0.0f);
  CHECK(instrument::blas_calls == 1);
  CHECK(instrument::passes == 1);
  CHECK(instrument::allocations == 2);
  std::vector<double> want(plain.size());
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j)
      want[std::size_t(i * n + j)] = std::max(plain[std::size_t(i * n + j)] + double(vbias[std::size_t(j)]), 0.0);
  check_all(y, {m, n}, want, tol<float>(k));

  // mixed types promote as NumPy: float @ double -> double, int32 @ float -> double
  const auto vd = test::values<double>(k * n, -1, 1, 2);
  auto bd = make(vd, {k, n});
  auto r1 = matmul(a, bd);
  static_assert(std::is_same_v<decltype(r1), array<double>>);
  check_all(r1, {m, n}, ref_matmul(refs(va), {m, k}, refs(vd), {k, n}, out), 1e-12 * double(k));
  const auto vi = test::values<std::int32_t>(m * k, -5, 5, 5);
  auto ai = make(vi, {m, k});
  auto r2 = matmul(ai, b);
  static_assert(std::is_same_v<decltype(r2), array<double>>);
  check_all(r2, {m, n}, ref_matmul(refs(vi), {m, k}, refs(vb), {k, n}, out), 1e-12 * double(k));
  auto r3 = matmul(ai, make(std::vector<std::complex<float>>(std::size_t(k), {1, 1}), {k}));
  static_assert(std::is_same_v<decltype(r3), array<std::complex<double>>>);
}

TEST_CASE("matmul of bool and narrow integers wraps like NumPy") {
  array<bool> p{{true, false}, {false, false}}, q{{false, true}, {true, true}};
  const array<bool> r = matmul(p, q);
  CHECK(r(0, 0) == false);
  CHECK(r(0, 1) == true);
  CHECK(r(1, 0) == false);
  CHECK(r(1, 1) == false);
  array<std::uint8_t> u = array<std::uint8_t>{200, 100}.reshape({1, 2}), w = array<std::uint8_t>{2, 1}.reshape({2, 1});
  CHECK(matmul(u, w)(0, 0) == std::uint8_t((200 * 2 + 100) % 256));
  array<std::int32_t> big = array<std::int32_t>{2'000'000'000, 2'000'000'000}.reshape({1, 2}), two = array<std::int32_t>{2, 1}.reshape({2, 1});
  CHECK(matmul(big, two)(0, 0) == std::int32_t(std::uint32_t(6'000'000'000ull % (1ull << 32))));
}

TEST_CASE("matmul into an existing array or view") {
  const index_t m = 7, k = 9, n = 8;
  const auto va = test::values<double>(m * k, -1, 1, 1), vb = test::values<double>(k * n, -1, 1, 2);
  auto a = make(va, {m, k});
  auto b = make(vb, {k, n});
  extents out;
  const auto want = ref_matmul(refs(va), {m, k}, refs(vb), {k, n}, out);
  array<double> c = zeros<double>({m, n});
  instrument::reset();
  matmul(a, b, c);
  CHECK(instrument::allocations == 0);
  check_all(c, {m, n}, want, tol<double>(k));
  // a column-major destination: C^T = B^T A^T, still no allocation
  array<double> ct = zeros<double>({n, m});
  instrument::reset();
  matmul(a, b, array_view<double>(ct.data(), {m, n}, {1, m}));
  CHECK(instrument::allocations == 0);
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) CHECK(test::close(ct(j, i), want[std::size_t(i * n + j)], tol<double>(k)));
  // every other column of a wider array: through a temporary
  array<double> wide = zeros<double>({m, 2 * n});
  matmul(a, b, array_view<double>(wide.data(), {m, n}, {2 * n, 2}));
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      CHECK(test::close(wide(i, 2 * j), want[std::size_t(i * n + j)], tol<double>(k)));
      CHECK(wide(i, 2 * j + 1) == 0);
    }
  // out overlapping an operand: computed into a temporary first (a = a @ s)
  array<double> sq = make(test::values<double>(k * k, -1, 1, 3), {k, k});
  array<double> a2 = a.copy();
  const auto want2 = ref_matmul(refs(va), {m, k}, refs(test::values<double>(k * k, -1, 1, 3)), {k, k}, out);
  matmul(a2, sq, a2);
  check_all(a2, {m, k}, want2, tol<double>(k));
  // a float out for double operands would lose precision silently only if allowed: a different
  // but castable type goes through a temporary
  array<std::complex<double>> cz = zeros<std::complex<double>>({m, n});
  matmul(a, b, cz);
  check_all(cz, {m, n}, std::vector<std::complex<double>>(want.begin(), want.end()), tol<double>(k));
  CHECK_THROWS_WITH_AS(matmul(a, b, zeros<double>({n, m})),
                       doctest::Contains("matmul: out has shape (8, 7), expected (7, 8)"), shape_error);
}

TEST_CASE("matmul errors name both shapes and the mismatched axes") {
  array<float> a = zeros<float>({2, 3}), b = zeros<float>({4, 5});
  CHECK_THROWS_WITH_AS((void)matmul(a, b),
                       "fusor: matmul: shapes (2, 3) and (4, 5) do not match: axis -1 of the first has size 3, axis -2 "
                       "of the second has size 4 (expected equal sizes)",
                       shape_error);
  CHECK_THROWS_WITH_AS((void)matmul(zeros<float>({3}), zeros<float>({4})),
                       doctest::Contains("shapes (3,) and (4,) do not match: axis 0 of the first has size 3, axis 0"),
                       shape_error);
  CHECK_THROWS_WITH_AS((void)matmul(zeros<float>({2, 3, 4}), zeros<float>({5, 4, 2})),
                       doctest::Contains("batch axes of shapes (2, 3, 4) and (5, 4, 2) do not broadcast: batch axis -1 "
                                         "has sizes 2 and 5"),
                       shape_error);
  CHECK_THROWS_WITH_AS((void)matmul(full<float>({}, 1.0f), a), doctest::Contains("at least one dimension"),
                       value_error);
}

TEST_CASE("dot follows NumPy for every rank") {
  const auto v1 = test::values<double>(7, -1, 1, 1), v2 = test::values<double>(7, -1, 1, 2);
  auto x = make(v1, {7});
  auto y = make(v2, {7});
  double s = 0;
  for (std::size_t i = 0; i < 7; ++i) s += v1[i] * v2[i];
  const array<double> d = dot(x, y);
  CHECK(d.ndim() == 0);
  CHECK(test::close(d.item(), s, 1e-12));
  // a 1-d product of expressions is one fused pass, no temporaries besides the 0-d result
  instrument::reset();
  CHECK(test::close(dot(x * 2, y + 0).item(), 2 * s, 1e-12));
  CHECK(instrument::allocations == 1);
  // int32 stays int32 (and wraps), as np.dot
  auto di = dot(array<std::int32_t>{1, 2, 3}, array<std::int32_t>{4, 5, 6});
  static_assert(std::is_same_v<decltype(di), array<std::int32_t>>);
  CHECK(di.item() == 32);
  // scalars multiply
  CHECK(dot(full<double>({}, 3.0), x)(2) == 3 * v1[2]);

  auto check = [&](const extents& sa, const extents& sb, const extents& want_shape) {
    const auto va = test::values<double>(sa.numel(), -1, 1, 3), vb = test::values<double>(sb.numel(), -1, 1, 4);
    const array<double> r = dot(make(va, sa), make(vb, sb));
    INFO("dot ", to_string(sa), " . ", to_string(sb));
    REQUIRE(r.shape() == want_shape);
    // reference: sum over a's last axis and b's second-to-last (or only) axis
    const index_t k = sa[sa.size() - 1];
    const int rb = sb.size();
    const index_t n = rb == 1 ? 1 : sb[rb - 1];
    const index_t outer_a = sa.numel() / std::max<index_t>(k, 1);
    const index_t outer_b = rb <= 2 ? 1 : sb.numel() / (k * n);
    index_t pos = 0;
    for (index_t i = 0; i < outer_a; ++i)
      for (index_t q = 0; q < outer_b; ++q)
        for (index_t j = 0; j < n; ++j) {
          double acc = 0;
          for (index_t p = 0; p < k; ++p) acc += va[std::size_t(i * k + p)] * vb[std::size_t(q * k * n + p * n + j)];
          CHECK(test::close(r.data()[pos++], acc, 1e-12 * double(k)));
        }
  };
  check({3, 4}, {4, 5}, {3, 5});
  check({2, 3, 4}, {4}, {2, 3});
  check({2, 3, 4}, {4, 5}, {2, 3, 5});
  check({3, 4}, {2, 4, 5}, {3, 2, 5});
  check({2, 3, 4}, {6, 4, 5}, {2, 3, 6, 5});
  check({4}, {4, 5}, {5});
  CHECK_THROWS_WITH_AS((void)dot(zeros<float>({2, 3}), zeros<float>({2, 3})),
                       doctest::Contains("dot: shapes (2, 3) and (2, 3) do not match: axis -1 of the first has size 3, "
                                         "axis -2 of the second has size 2"),
                       shape_error);
  CHECK_THROWS_WITH_AS((void)dot(zeros<float>({3}), zeros<float>({4})),
                       doctest::Contains("dot: shapes (3,) and (4,) do not match"), shape_error);
  CHECK_THROWS_WITH_AS((void)dot(zeros<float>({2, 3, 4}), zeros<float>({2, 5, 6})),
                       doctest::Contains("axis -1 of the first has size 4, axis -2 of the second has size 5"),
                       shape_error);
}

TEST_CASE("vdot conjugates its first operand and flattens; inner and outer") {
  using C = std::complex<double>;
  const auto va = test::values<C>(6, -1, 1, 1), vb = test::values<C>(6, -1, 1, 2);
  auto a = make(va, {2, 3});
  auto b = make(vb, {3, 2});  // same size, different shape: both flattened
  C s = 0, u = 0;
  for (std::size_t i = 0; i < 6; ++i) {
    s += std::conj(va[i]) * vb[i];
    u += va[i] * vb[i];
  }
  const C got = vdot(a, b);
  CHECK(test::close(got, s, 1e-12));
  CHECK(test::close(vdot(a, make(vb, {2, 3})), s, 1e-12));
  CHECK(test::close(dot(make(va, {6}), make(vb, {6})).item(), u, 1e-12));  // dot does not conjugate
  CHECK(vdot(array<float>{1, 2}, array<float>{3, 4}) == 11.0f);
  CHECK_THROWS_WITH_AS((void)vdot(a, zeros<C>({5})),
                       doctest::Contains("vdot: operands of shapes (2, 3) and (5,) have different sizes"), shape_error);

  // inner: over the last axes of both
  const auto x = test::values<float>(2 * 3 * 4, -1, 1, 3), y = test::values<float>(5 * 4, -1, 1, 4);
  const array<float> in = inner(make(x, {2, 3, 4}), make(y, {5, 4}));
  REQUIRE(in.shape() == extents{2, 3, 5});
  for (index_t i = 0; i < 6; ++i)
    for (index_t j = 0; j < 5; ++j) {
      double acc = 0;
      for (index_t p = 0; p < 4; ++p) acc += double(x[std::size_t(i * 4 + p)]) * double(y[std::size_t(j * 4 + p)]);
      CHECK(test::close(double(in.data()[i * 5 + j]), acc, tol<float>(4)));
    }
  CHECK(inner(array<double>{1, 2, 3}, array<double>{4, 5, 6}).item() == 32);
  CHECK_THROWS_WITH_AS((void)inner(zeros<float>({2, 3}), zeros<float>({3, 2})),
                       doctest::Contains("inner: shapes (2, 3) and (3, 2) do not match: axis 1 of the first has size 3, "
                                         "axis 1 of the second has size 2"),
                       shape_error);

  // outer: flattened operands, one fused pass
  auto m = make(x, {2, 3, 4});
  auto w = array<double>{1, -2, 3};
  const array<double> o = outer(m, w);
  REQUIRE(o.shape() == extents{24, 3});
  for (index_t i = 0; i < 24; ++i)
    for (index_t j = 0; j < 3; ++j) CHECK(o(i, j) == double(x[std::size_t(i)]) * w(j));
  const array<bool> ob = outer(array<bool>{true, false}, array<bool>{true});
  CHECK(ob(0, 0));
  CHECK(!ob(1, 0));
}

TEST_CASE("tensordot: int and axis-list forms against loops, and its errors") {
  const auto va = test::values<double>(3 * 4 * 5, -1, 1, 1), vb = test::values<double>(4 * 5 * 6, -1, 1, 2);
  auto a = make(va, {3, 4, 5});
  auto b = make(vb, {4, 5, 6});
  const array<double> t2 = tensordot(a, b);  // axes = 2
  REQUIRE(t2.shape() == extents{3, 6});
  for (index_t i = 0; i < 3; ++i)
    for (index_t l = 0; l < 6; ++l) {
      double acc = 0;
      for (index_t j = 0; j < 4; ++j)
        for (index_t k = 0; k < 5; ++k) acc += va[std::size_t(i * 20 + j * 5 + k)] * vb[std::size_t(j * 30 + k * 6 + l)];
      CHECK(test::close(t2(i, l), acc, 1e-12 * 20));
    }
  // explicit pairs, in a permuted order: a's axes (2, 0) with c's axes (0, 2); c is (5, 7, 3)
  const auto vc = test::values<double>(5 * 7 * 3, -1, 1, 3);
  auto c = make(vc, {5, 7, 3});
  const array<double> tp = tensordot(a, c, {2, 0}, {0, 2});
  REQUIRE(tp.shape() == extents{4, 7});
  for (index_t j = 0; j < 4; ++j)
    for (index_t q = 0; q < 7; ++q) {
      double acc = 0;
      for (index_t i = 0; i < 3; ++i)
        for (index_t k = 0; k < 5; ++k) acc += va[std::size_t(i * 20 + j * 5 + k)] * vc[std::size_t(k * 21 + q * 3 + i)];
      CHECK(test::close(tp(j, q), acc, 1e-12 * 15));
    }
  // axes = 0: the outer product, shaped a.shape + b.shape
  const array<double> t0 = tensordot(array<double>{1, 2}, array<double>{{3, 4, 5}}, 0);
  REQUIRE(t0.shape() == extents{2, 1, 3});
  CHECK(t0(1, 0, 2) == 10);
  // a full contraction is a 0-d array
  CHECK(test::close(tensordot(a, a, 3).item(), [&] {
    double s = 0;
    for (double v : va) s += v * v;
    return s;
  }(), 1e-12 * 60));

  CHECK_THROWS_WITH_AS((void)tensordot(a, b, {1, 2}, {0}), doctest::Contains("tensordot: the axis lists (1, 2) and (0,)"),
                       value_error);
  CHECK_THROWS_WITH_AS((void)tensordot(a, b, {3}, {0}),
                       doctest::Contains("tensordot: axis 3 is out of range for the first operand of shape (3, 4, 5)"),
                       index_error);
  CHECK_THROWS_WITH_AS((void)tensordot(a, b, {0}, {0}),
                       doctest::Contains("tensordot: shapes (3, 4, 5) and (4, 5, 6) do not match: axis 0 of the first "
                                         "has size 3, axis 0 of the second has size 4"),
                       shape_error);
  CHECK_THROWS_WITH_AS((void)tensordot(a, b, {1, 1}, {0, 1}), doctest::Contains("listed twice"), value_error);
  CHECK_THROWS_WITH_AS((void)tensordot(a, b, 4), doctest::Contains("tensordot: cannot contract 4 axes"), value_error);
}

TEST_CASE("trace with offsets and axes; its result type widens integers as NumPy") {
  const auto v = test::values<double>(3 * 4 * 5, -1, 1, 1);
  auto a = make(v, {3, 4, 5});
  auto m = a.reshape({12, 5});
  for (index_t off : {0, 1, -1, 4, -11, 5, -12}) {
    double s = 0;
    for (index_t i = 0; i < 12; ++i)
      if (i + off >= 0 && i + off < 5) s += v[std::size_t(i * 5 + i + off)];
    INFO("offset ", off);
    CHECK(test::close(trace(m, off).item(), s, 1e-12));
  }
  const array<double> t12 = trace(a, 0, 1, 2);  // over the (4, 5) planes
  REQUIRE(t12.shape() == extents{3});
  const array<double> t02 = trace(a, 1, 0, -1);  // axes 0 and 2, offset 1
  REQUIRE(t02.shape() == extents{4});
  for (index_t i = 0; i < 3; ++i) {
    double s = 0;
    for (index_t j = 0; j < 4; ++j) s += v[std::size_t(i * 20 + j * 5 + j)];
    CHECK(test::close(t12(i), s, 1e-12));
  }
  for (index_t j = 0; j < 4; ++j) {
    double s = 0;
    for (index_t i = 0; i < 3; ++i) s += v[std::size_t(i * 20 + j * 5 + i + 1)];
    CHECK(test::close(t02(j), s, 1e-12));
  }
  auto ti = trace(array<std::int32_t>{{1, 2}, {3, 4}});
  static_assert(std::is_same_v<decltype(ti), array<std::int64_t>>);
  CHECK(ti.item() == 5);
  CHECK(test::close(trace(m * 2).item(), 2 * trace(m).item(), 1e-12));  // an expression operand
  CHECK_THROWS_WITH_AS((void)trace(array<double>{1, 2}), doctest::Contains("trace needs an array of rank >= 2"),
                       value_error);
  CHECK_THROWS_WITH_AS((void)trace(m, 0, 1, -1), doctest::Contains("trace needs two different axes"), value_error);
}

TEST_CASE("einsum patterns against loops") {
  const auto va = test::values<double>(4 * 5, -1, 1, 1), vb = test::values<double>(5 * 3, -1, 1, 2);
  const auto vs = test::values<double>(5 * 5, -1, 1, 3);
  auto a = make(va, {4, 5});
  auto b = make(vb, {5, 3});
  auto sq = make(vs, {5, 5});
  extents out;
  const double t = 1e-12 * 25;

  check_all(einsum("ij,jk->ik", a, b), {4, 3}, ref_matmul(va, {4, 5}, vb, {5, 3}, out), t);
  check_all(einsum("ij,jk", a, b), {4, 3}, ref_matmul(va, {4, 5}, vb, {5, 3}, out), t);  // implicit output
  check_all(einsum(" i j , j k -> i k ", a, b), {4, 3}, ref_matmul(va, {4, 5}, vb, {5, 3}, out), t);
  // transposed output: (ab)^T = "ij,jk->ki"
  {
    const array<double> r = einsum("ij,jk->ki", a, b);
    const auto want = ref_matmul(va, {4, 5}, vb, {5, 3}, out);
    REQUIRE(r.shape() == extents{3, 4});
    for (index_t i = 0; i < 4; ++i)
      for (index_t k = 0; k < 3; ++k) CHECK(test::close(r(k, i), want[std::size_t(i * 3 + k)], t));
  }
  // batched
  const auto v3 = test::values<double>(2 * 4 * 5, -1, 1, 4), w3 = test::values<double>(2 * 5 * 3, -1, 1, 5);
  check_all(einsum("bij,bjk->bik", make(v3, {2, 4, 5}), make(w3, {2, 5, 3})), {2, 4, 3},
            ref_matmul(v3, {2, 4, 5}, w3, {2, 5, 3}, out), t);
  // A @ B^T reads B transposed
  {
    const array<double> r = einsum("ij,kj->ik", a, a);
    for (index_t i = 0; i < 4; ++i)
      for (index_t k = 0; k < 4; ++k) {
        double s = 0;
        for (index_t j = 0; j < 5; ++j) s += va[std::size_t(i * 5 + j)] * va[std::size_t(k * 5 + j)];
        CHECK(test::close(r(i, k), s, t));
      }
  }
  // one operand: transpose, trace, diagonal, sums
  {
    const array<double> r = einsum("ij->ji", a);
    REQUIRE(r.shape() == extents{5, 4});
    for (index_t i = 0; i < 4; ++i)
      for (index_t j = 0; j < 5; ++j) CHECK(r(j, i) == a(i, j));
    double tr = 0, all_ = 0;
    std::vector<double> diag, rows(5, 0.0), cols(4, 0.0);
    for (index_t i = 0; i < 5; ++i) {
      tr += vs[std::size_t(i * 6)];
      diag.push_back(vs[std::size_t(i * 6)]);
    }
    for (index_t i = 0; i < 4; ++i)
      for (index_t j = 0; j < 5; ++j) {
        all_ += va[std::size_t(i * 5 + j)];
        rows[std::size_t(j)] += va[std::size_t(i * 5 + j)];
        cols[std::size_t(i)] += va[std::size_t(i * 5 + j)];
      }
    CHECK(test::close(einsum("ii->", sq).item(), tr, t));
    CHECK(test::close(einsum("ii", sq).item(), tr, t));
    check_all(einsum("ii->i", sq), {5}, diag, 0);
    CHECK(test::close(einsum("ij->", a).item(), all_, t));
    check_all(einsum("ij->j", a), {5}, rows, t);
    check_all(einsum("ij->i", a), {4}, cols, t);
    const auto v4 = test::values<double>(2 * 3 * 4, -1, 1, 6);
    const array<double> p = einsum("ijk->kji", make(v4, {2, 3, 4}));
    REQUIRE(p.shape() == extents{4, 3, 2});
    CHECK(p(3, 1, 0) == v4[std::size_t(0 * 12 + 1 * 4 + 3)]);
  }
  // two operands without a contraction: one fused pass
  {
    const auto x = test::values<double>(4, -1, 1, 7), y = test::values<double>(3, -1, 1, 8);
    const array<double> o = einsum("i,j->ij", make(x, {4}), make(y, {3}));
    REQUIRE(o.shape() == extents{4, 3});
    CHECK(o(2, 1) == x[2] * y[1]);
    instrument::reset();
    const array<double> e = einsum("ij,ij->ij", a, a);
    CHECK(instrument::passes == 1);
    CHECK(e(3, 4) == a(3, 4) * a(3, 4));
    const array<double> rb = einsum("ij,j->ij", a, make(test::values<double>(5, -1, 1, 9), {5}));
    CHECK(rb(1, 2) == a(1, 2) * test::values<double>(5, -1, 1, 9)[2]);
    double ip = 0, fro = 0;
    for (std::size_t i = 0; i < 4; ++i) ip += x[i] * x[i];
    for (double v : va) fro += v * v;
    CHECK(test::close(einsum("i,i->", make(x, {4}), make(x, {4})).item(), ip, t));
    CHECK(test::close(einsum("ij,ij->", a, a).item(), fro, t));
  }
  // a general contraction: "ijk,jkl->il", and one with a summed-out index and a diagonal
  {
    const auto x = test::values<double>(2 * 3 * 4, -1, 1, 10), y = test::values<double>(3 * 4 * 5, -1, 1, 11);
    const array<double> r = einsum("ijk,jkl->il", make(x, {2, 3, 4}), make(y, {3, 4, 5}));
    REQUIRE(r.shape() == extents{2, 5});
    for (index_t i = 0; i < 2; ++i)
      for (index_t l = 0; l < 5; ++l) {
        double s = 0;
        for (index_t j = 0; j < 3; ++j)
          for (index_t k = 0; k < 4; ++k) s += x[std::size_t(i * 12 + j * 4 + k)] * y[std::size_t(j * 20 + k * 5 + l)];
        CHECK(test::close(r(i, l), s, t));
      }
    // "kij,jl->li": k summed out of the first operand before the GEMM
    const array<double> r2 = einsum("kij,jl->li", make(x, {2, 3, 4}), make(y, {4, 15}));
    REQUIRE(r2.shape() == extents{15, 3});
    for (index_t i = 0; i < 3; ++i)
      for (index_t l = 0; l < 15; ++l) {
        double s = 0;
        for (index_t k = 0; k < 2; ++k)
          for (index_t j = 0; j < 4; ++j) s += x[std::size_t(k * 12 + i * 4 + j)] * y[std::size_t(j * 15 + l)];
        CHECK(test::close(r2(l, i), s, t));
      }
    // "ii,i->": the diagonal, then an inner product
    const auto z = test::values<double>(5, -1, 1, 12);
    double s = 0;
    for (std::size_t i = 0; i < 5; ++i) s += vs[i * 6] * z[i];
    CHECK(test::close(einsum("ii,i->", sq, make(z, {5})).item(), s, t));
  }
  // types promote, integers stay integers
  const array<std::int32_t> ii = einsum("ij,jk->ik", array<std::int32_t>{1, 2}.reshape({1, 2}), array<std::int32_t>{3, 4}.reshape({2, 1}));
  CHECK(ii(0, 0) == 11);
  auto mixed = einsum("i,i->", array<float>{1, 2}, array<double>{3, 4});
  static_assert(std::is_same_v<decltype(mixed), array<double>>);
  CHECK(mixed.item() == 11);
  // an uppercase index is an index like any other
  check_all(einsum("Ij,jK->IK", a, b), {4, 3}, ref_matmul(va, {4, 5}, vb, {5, 3}, out), t);
}

TEST_CASE("contiguous operands go to BLAS as they lie: only the result is allocated") {
  const auto va = test::values<double>(4 * 5, -1, 1, 1), vb = test::values<double>(5 * 3, -1, 1, 2);
  auto a = make(va, {4, 5});
  auto b = make(vb, {5, 3});
  extents out;
  const double t = 1e-12 * 25;
  instrument::reset();
  const array<double> r = einsum("ij,jk->ik", a, b);
  CHECK(instrument::allocations == 1);
  check_all(r, {4, 3}, ref_matmul(va, {4, 5}, vb, {5, 3}, out), t);

  const auto v3 = test::values<double>(2 * 4 * 5, -1, 1, 4), w3 = test::values<double>(2 * 5 * 3, -1, 1, 5);
  auto x = make(v3, {2, 4, 5});
  auto y = make(w3, {2, 5, 3});
  instrument::reset();
  const array<double> rb = einsum("bij,bjk->bik", x, y);
  CHECK(instrument::allocations == 1);
  check_all(rb, {2, 4, 3}, ref_matmul(v3, {2, 4, 5}, w3, {2, 5, 3}, out), t);

  // tensordot(p, q) with axes = 2 is p (3, 20) @ q (20, 6)
  const auto vp = test::values<double>(3 * 4 * 5, -1, 1, 6), vq = test::values<double>(4 * 5 * 6, -1, 1, 7);
  auto p = make(vp, {3, 4, 5});
  auto q = make(vq, {4, 5, 6});
  instrument::reset();
  const array<double> rt = tensordot(p, q);
  CHECK(instrument::allocations == 1);
  check_all(rt, {3, 6}, ref_matmul(vp, {3, 20}, vq, {20, 6}, out), 1e-12 * 20);
}

TEST_CASE("einsum sums integers and bools straight into the operand's type, in one pass") {
  const array<std::int32_t> iv = make(std::vector<std::int32_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  instrument::reset();
  const array<std::int32_t> rs = einsum("ij->i", iv);
  CHECK(instrument::passes == 1);
  CHECK(instrument::allocations == 1);
  REQUIRE(rs.shape() == extents{2});
  CHECK(rs(0) == 6);
  CHECK(rs(1) == 15);
  // wraps like NumPy's int32 einsum after an int64 accumulation
  const array<std::int32_t> big = make(std::vector<std::int32_t>{2'000'000'000, 2'000'000'000}, {2});
  CHECK(einsum("i->", big).item() == std::int32_t(std::uint32_t(4'000'000'000ull)));
  CHECK(einsum("ij->j", make(std::vector<std::int32_t>{2'000'000'000, 1, 2'000'000'000, 2}, {2, 2}))(0) ==
        std::int32_t(std::uint32_t(4'000'000'000ull)));
  // bool: a sum is "any" (non-zero count)
  const array<bool> bv{{true, false, true}, {false, false, false}};
  const array<bool> rb = einsum("ij->i", bv);
  CHECK(rb(0) == true);
  CHECK(rb(1) == false);
  const array<bool> rj = einsum("ij->j", bv);
  CHECK(rj(0) == true);
  CHECK(rj(1) == false);
  CHECK(rj(2) == true);
}

TEST_CASE("einsum rejects what it does not support, naming the pattern") {
  array<double> a = zeros<double>({3, 4}), b = zeros<double>({5, 6});
  CHECK_THROWS_WITH_AS((void)einsum("...ij,...jk->...ik", a, a),
                       doctest::Contains("einsum '...ij,...jk->...ik': ellipsis ('...') is not supported"), value_error);
  CHECK_THROWS_WITH_AS((void)einsum("ij,jk,kl->il", a, a, a),
                       doctest::Contains("einsum 'ij,jk,kl->il': 3 operands are not supported (at most 2)"),
                       value_error);
  CHECK_THROWS_WITH_AS((void)einsum("i1,1j->ij", a, a), doctest::Contains("invalid character '1'"), value_error);
  CHECK_THROWS_WITH_AS((void)einsum("ij,jk->ik", a, b),
                       doctest::Contains("einsum 'ij,jk->ik': index 'j' has size 4 in operand 0 and size 5 in operand 1"),
                       shape_error);
  CHECK_THROWS_WITH_AS((void)einsum("ijk->kji", a),
                       doctest::Contains("operand 0 has shape (3, 4) (rank 2) but the pattern gives it 3 indices ('ijk')"),
                       shape_error);
  CHECK_THROWS_WITH_AS((void)einsum("ij->ik", a), doctest::Contains("output index 'k' does not appear in any operand"),
                       value_error);
  CHECK_THROWS_WITH_AS((void)einsum("ij->ii", a), doctest::Contains("index 'i' appears twice in the output"),
                       value_error);
  CHECK_THROWS_WITH_AS((void)einsum("ij,jk->ik", a), doctest::Contains("names 2 operand(s) but 1 were given"),
                       value_error);
  CHECK_THROWS_WITH_AS((void)einsum("ii->i", a), doctest::Contains("index 'i' has size 3 in operand 0 and size 4"),
                       shape_error);
}

TEST_CASE_TEMPLATE("matrix norms against loops", T, float, double, std::complex<double>, std::int32_t) {
  const auto v = test::values<T>(2 * 4 * 5, -5, 5, 1);
  auto a = make(v, {2, 4, 5});
  using R = std::conditional_t<std::is_same_v<real_t<T>, float>, float, double>;
  const double t = std::is_same_v<R, float> ? 1e-5 : 1e-12;
  for (index_t bi = 0; bi < 2; ++bi) {
    double fro = 0, c1 = 0, cm1 = INFINITY, ri = 0, rmi = INFINITY;
    for (index_t j = 0; j < 5; ++j) {
      double c = 0;
      for (index_t i = 0; i < 4; ++i) c += std::abs(to_ref(v[std::size_t(bi * 20 + i * 5 + j)]));
      c1 = std::max(c1, c);
      cm1 = std::min(cm1, c);
    }
    for (index_t i = 0; i < 4; ++i) {
      double r = 0;
      for (index_t j = 0; j < 5; ++j) {
        const double x = std::abs(to_ref(v[std::size_t(bi * 20 + i * 5 + j)]));
        r += x;
        fro += x * x;
      }
      ri = std::max(ri, r);
      rmi = std::min(rmi, r);
    }
    auto nf = matrix_norm(a);
    static_assert(std::is_same_v<decltype(nf), array<R>>);
    REQUIRE(nf.shape() == extents{2});
    CHECK(test::close(double(nf(bi)), std::sqrt(fro), t));
    CHECK(test::close(double(matrix_norm(a, 1)(bi)), c1, t));
    CHECK(test::close(double(matrix_norm(a, -1)(bi)), cm1, t));
    CHECK(test::close(double(matrix_norm(a, INFINITY)(bi)), ri, t));
    CHECK(test::close(double(matrix_norm(a, -INFINITY)(bi)), rmi, t));
    // the same matrices seen with axes swapped: 1 and inf exchange roles
    CHECK(test::close(double(matrix_norm(a, 1, {-1, -2})(bi)), ri, t));
  }
  CHECK(matrix_norm(a, "fro", {0, 2}).shape() == extents{4});
  CHECK(matrix_norm(a, 1, {-2, -1}, true).shape() == extents{2, 1, 1});
  // 2: the square root of the largest eigenvalue of A^H A, by power iteration on the host; nuclear:
  // the trace of (A A^H)^(1/2) = sum of the square roots of its eigenvalues, bounded by
  // sqrt(rank) times the Frobenius norm and at least the spectral norm
  for (index_t bi = 0; bi < 2; ++bi) {
    using W = std::complex<double>;
    std::vector<W> x(5, W(1.0)), y(5);
    double lambda = 0;
    for (int it = 0; it < 500; ++it) {
      std::vector<W> ax(4, W(0));
      for (index_t i = 0; i < 4; ++i)
        for (index_t j = 0; j < 5; ++j) ax[std::size_t(i)] += W(to_ref(v[std::size_t(bi * 20 + i * 5 + j)])) * x[std::size_t(j)];
      for (index_t j = 0; j < 5; ++j) {
        y[std::size_t(j)] = 0;
        for (index_t i = 0; i < 4; ++i) y[std::size_t(j)] += std::conj(W(to_ref(v[std::size_t(bi * 20 + i * 5 + j)]))) * ax[std::size_t(i)];
      }
      double nrm = 0;
      for (const auto& e : y) nrm += std::norm(e);
      nrm = std::sqrt(nrm);
      lambda = nrm;
      for (index_t j = 0; j < 5; ++j) x[std::size_t(j)] = y[std::size_t(j)] / nrm;
    }
    CHECK(test::close(double(matrix_norm(a, 2)(bi)), std::sqrt(lambda), t * 10));
    const double fro = double(matrix_norm(a)(bi)), nuc = double(matrix_norm(a, "nuc")(bi));
    CHECK(nuc >= std::sqrt(lambda) * (1 - t));
    CHECK(nuc <= 2 * fro * (1 + t));  // rank <= 4: sqrt(4) = 2
    CHECK(double(matrix_norm(a, -2)(bi)) <= std::sqrt(lambda) * (1 + t));
  }
  CHECK_THROWS_WITH_AS((void)matrix_norm(a, 3), doctest::Contains("unsupported order"), value_error);
  CHECK_THROWS_WITH_AS((void)matrix_norm(array<double>{1, 2}), doctest::Contains("rank >= 2"), value_error);
}

TEST_CASE("the BLAS thread count is a runtime setting and does not change results") {
  const auto va = test::values<double>(64 * 64, -1, 1, 1);
  auto a = make(va, {64, 64});
  const array<double> r0 = matmul(a, a);
  set_blas_num_threads(1);
  const int one = blas_num_threads();  // 0: the library does not say
  const array<double> r1 = matmul(a, a);
  set_blas_num_threads(0);
  if (one != 0) CHECK(one == 1);
  extents out;
  const auto want = ref_matmul(va, {64, 64}, va, {64, 64}, out);
  check_all(r1, {64, 64}, want, 1e-12 * 64);
  check_all(r0, {64, 64}, want, 1e-12 * 64);
}
