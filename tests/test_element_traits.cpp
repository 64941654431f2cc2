// element_traits is open: a type defined here, outside the library, becomes an element type by
// specialising it, and then takes part in fused expressions, promotion, casts and reductions
// exactly as the built-in types do. Also checks the built-in table for the integer widths that
// NumPy has (int8/16, uint16/32/64) against NumPy 2's answers.
#include "common.hpp"

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

namespace user {
/// Signed Q16.16 fixed point: the kind of type a signal-processing user brings.
struct q16 {
  std::int32_t raw = 0;
  static constexpr q16 from_raw(std::int32_t r) { return q16{r}; }
  constexpr q16() = default;
  constexpr explicit q16(std::int32_t r) : raw(r) {}
  static constexpr q16 from(double v) { return q16{std::int32_t(v * 65536.0)}; }
  constexpr explicit operator double() const { return double(raw) / 65536.0; }
  // wrapping, like the hardware integer it models (the long sums below overflow)
  friend constexpr q16 operator+(q16 a, q16 b) { return q16{std::int32_t(std::uint32_t(a.raw) + std::uint32_t(b.raw))}; }
  friend constexpr q16 operator-(q16 a, q16 b) { return q16{std::int32_t(std::uint32_t(a.raw) - std::uint32_t(b.raw))}; }
  friend constexpr q16 operator-(q16 a) { return q16{std::int32_t(0u - std::uint32_t(a.raw))}; }
  friend constexpr q16 operator*(q16 a, q16 b) { return q16{std::int32_t((std::int64_t(a.raw) * b.raw) >> 16)}; }
  friend constexpr bool operator==(q16 a, q16 b) { return a.raw == b.raw; }
  friend constexpr bool operator!=(q16 a, q16 b) { return a.raw != b.raw; }
  friend constexpr bool operator<(q16 a, q16 b) { return a.raw < b.raw; }
  friend constexpr bool operator>(q16 a, q16 b) { return a.raw > b.raw; }
  friend constexpr bool operator<=(q16 a, q16 b) { return a.raw <= b.raw; }
  friend constexpr bool operator>=(q16 a, q16 b) { return a.raw >= b.raw; }
};
}  // namespace user

template <>
struct std::numeric_limits<user::q16> : std::numeric_limits<std::int32_t> {
  static constexpr user::q16 lowest() { return user::q16{std::numeric_limits<std::int32_t>::lowest()}; }
  static constexpr user::q16 max() { return user::q16{std::numeric_limits<std::int32_t>::max()}; }
};

template <>
struct fusor::element_traits<user::q16> {
  static constexpr bool is_element = true;
  static constexpr element_kind kind = element_kind::other;
  static constexpr std::string_view name = "q16";
  using float_type = double;   // sqrt, exp, ... of q16 compute in double
  using accumulator = user::q16;
  using sum_type = user::q16;
  // with an array of floating values the result is that float type; with integers, q16
  template <class U>
  using promote_with = std::conditional_t<std::is_floating_point_v<U>, double, user::q16>;
  template <class From>
  static constexpr bool castable_from = std::is_integral_v<From>;  // floats would lose their kind
  template <class To>
  static constexpr bool castable_to = std::is_floating_point_v<To>;
  template <class From>
  static constexpr user::q16 convert(const From& x) {
    if constexpr (std::is_same_v<From, user::q16>) return x;
    else return user::q16::from(double(x));
  }
};

using namespace fusor;
using user::q16;

TEST_CASE("a user-defined element type plugs in through element_traits") {
  static_assert(is_element_v<q16> && element<q16>);
  static_assert(dtype_name<q16>() == "q16");
  static_assert(std::is_same_v<promote_t<q16, std::int32_t>, q16>);
  static_assert(std::is_same_v<promote_t<float, q16>, double>);
  static_assert(std::is_same_v<weak_result_t<q16, double>, q16>);  // scalars adopt the array's type
  static_assert(std::is_same_v<to_float_t<q16>, double>);
  static_assert(same_kind_castable_v<std::int32_t, q16> && !same_kind_castable_v<double, q16>);
  static_assert(same_kind_castable_v<q16, double> && !same_kind_castable_v<q16, std::int32_t>);

  for (index_t n : test::edge_sizes<float>()) {
    std::vector<q16> av(static_cast<std::size_t>(n)), bv(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) {
      av[std::size_t(i)] = q16::from(0.25 * double(i % 17) - 2);
      bv[std::size_t(i)] = q16::from(0.5 * double(i % 5) + 0.125);
    }
    array<q16> a = test::make(av), b = test::make(bv);
    // one fused statement on the user type, against the same operations in a plain loop
    array<q16> c = a * b + a - b;
    array<bool> gt = c > a;
    array<double> roots = sqrt(abs(cast<double>(c)));  // a cast, then the float path
    array<double> mixed = a + arange<double>(double(n));  // promote_with<double>
    index_t bad = 0;
    q16 total{};
    for (index_t i = 0; i < n; ++i) {
      const q16 x = av[std::size_t(i)], y = bv[std::size_t(i)], want = x * y + x - y;
      bad += !(c(i) == want) || gt(i) != (want > x) || roots(i) != std::sqrt(std::abs(double(want))) ||
             mixed(i) != double(x) + double(i);
      total = total + want;
    }
    INFO("n=", n);
    CHECK(bad == 0);
    CHECK(sum(c) == total);  // the reduction collects in element_traits<q16>::accumulator
    if (n > 0) {
      q16 mx = c(0);
      for (index_t i = 1; i < n; ++i) mx = c(i) > mx ? c(i) : mx;
      CHECK(max(c) == mx);
    }
  }
  // conversions go through element_traits<q16>::convert
  array<q16> from_int = array<std::int32_t>{1, -2, 3};
  CHECK(from_int(1) == q16::from(-2));
  array<double> back = from_int;
  CHECK(back(2) == 3.0);
}

TEST_CASE("the integer widths NumPy has promote, reduce and convert as NumPy 2 does") {
  // np.result_type for mixed signedness: the signed type if wider, else twice the unsigned width
  static_assert(std::is_same_v<promote_t<std::uint8_t, std::int8_t>, std::int16_t>);
  static_assert(std::is_same_v<promote_t<std::uint16_t, std::int16_t>, std::int32_t>);
  static_assert(std::is_same_v<promote_t<std::uint32_t, std::int32_t>, std::int64_t>);
  static_assert(std::is_same_v<promote_t<std::uint64_t, std::int64_t>, double>);
  static_assert(std::is_same_v<promote_t<std::uint64_t, std::int8_t>, double>);
  static_assert(std::is_same_v<promote_t<std::uint8_t, std::uint32_t>, std::uint32_t>);
  static_assert(std::is_same_v<promote_t<std::int16_t, float>, float>);
  static_assert(std::is_same_v<promote_t<std::uint16_t, float>, float>);
  static_assert(std::is_same_v<promote_t<std::uint32_t, std::complex<float>>, std::complex<double>>);
  static_assert(std::is_same_v<promote_t<std::int8_t, std::complex<float>>, std::complex<float>>);
  static_assert(std::is_same_v<to_float_t<std::int16_t>, float> && std::is_same_v<to_float_t<std::uint32_t>, double>);
  static_assert(same_kind_castable_v<std::uint64_t, std::int8_t> && !same_kind_castable_v<std::int8_t, std::uint64_t>);
  static_assert(dtype_name<std::uint16_t>() == "uint16" && dtype_name<std::int8_t>() == "int8");

  // unsigned sums and products are uint64 (np.sum of uint8 is uint64); signed ones int64
  array<std::uint8_t> u{200, 100, 255};
  static_assert(std::is_same_v<decltype(sum(u)), std::uint64_t>);
  static_assert(std::is_same_v<decltype(prod(array<std::uint16_t>{1})), std::uint64_t>);
  static_assert(std::is_same_v<decltype(sum(array<std::int8_t>{1})), std::int64_t>);
  static_assert(std::is_same_v<value_t<decltype(cumsum(u))>, std::uint64_t>);
  CHECK(sum(u) == 555u);
  array<std::uint64_t> big{std::numeric_limits<std::uint64_t>::max() - 1, 1};
  CHECK(sum(big) == std::numeric_limits<std::uint64_t>::max());  // beyond int64, exactly
  CHECK(max(big) == std::numeric_limits<std::uint64_t>::max() - 1);

  // wrapping arithmetic in every width (no undefined behaviour from C++'s int promotion)
  for (index_t n : test::edge_sizes<std::int32_t>()) {
    std::vector<std::uint16_t> av(static_cast<std::size_t>(n));
    std::vector<std::int8_t> bv(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) {
      av[std::size_t(i)] = std::uint16_t(65535 - 97 * i);
      bv[std::size_t(i)] = std::int8_t(i % 256 - 128);
    }
    array<std::uint16_t> a = test::make(av);
    array<std::int8_t> b = test::make(bv);
    array<std::uint16_t> sq = a * a;                 // 65535^2 overflows int: must wrap as uint16
    array<std::int8_t> neg = -b;                     // -(-128) wraps to -128
    array<std::int32_t> mixed = a + b;               // uint16 + int8 -> int32
    array<std::uint16_t> shifted = a >> std::uint16_t(3);
    index_t bad = 0;
    for (index_t i = 0; i < n; ++i) {
      const std::uint32_t x = av[std::size_t(i)];
      const std::int32_t y = bv[std::size_t(i)];
      bad += sq(i) != std::uint16_t((x * x) & 0xffffu) || neg(i) != std::int8_t(std::uint8_t(-y)) ||
             mixed(i) != std::int32_t(x) + y || shifted(i) != std::uint16_t(x >> 3);
    }
    INFO("n=", n);
    CHECK(bad == 0);
  }
  // float to unsigned saturates; uint64 keeps every bit
  array<std::uint32_t> sat = array<double>{-5.0, 1e12, 7.9}.astype<std::uint32_t>();
  CHECK(test::walk(sat) == std::vector<std::uint32_t>{0, 4294967295u, 7});
  array<std::uint64_t> bits{0xfedcba9876543210ull};
  CHECK(eval(bits ^ std::uint64_t(0xff))(0) == 0xfedcba98765432efull);
  CHECK_THROWS_AS(eval(array<std::uint16_t>{1} + 70000), value_error);
  CHECK(eval(array<std::uint16_t>{1} < 70000)(0));
}

// ---- float16 and bfloat16 -------------------------------------------------------------------

namespace {

/// The value of a 16-bit pattern written from its layout (1 sign, E exponent, M mantissa bits),
/// in double: the reference every conversion is checked against.
template <int M, int E>
double reference_value(std::uint16_t b) {
  const int bias = (1 << (E - 1)) - 1;
  const bool negative = b >> 15;
  const int e = (b >> M) & ((1 << E) - 1);
  const int m = b & ((1 << M) - 1);
  double v;
  if (e == (1 << E) - 1) v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (e == 0) v = std::ldexp(double(m), 1 - bias - M);
  else v = std::ldexp(1.0 + std::ldexp(double(m), -M), e - bias);
  return negative ? -v : v;
}

template <class H, int M, int E>
void check_every_pattern() {
  int decoded = 0, round_trips = 0, ties = 0, neighbours = 0;
  for (std::uint32_t p = 0; p < 65536; ++p) {
    const auto h = H::from_bits(std::uint16_t(p));
    const double want = reference_value<M, E>(std::uint16_t(p));
    const float got = float(h);
    if (std::isnan(want)) {
      decoded += std::isnan(got) && fusor::isnan(h) && !fusor::isfinite(h);
      round_trips += fusor::isnan(H(got)) && fusor::isnan(H(double(got)));
      continue;
    }
    decoded += double(got) == want && std::signbit(got) == bool(p >> 15) && fusor::isnan(h) == false &&
               fusor::isinf(h) == std::isinf(want);
    round_trips += H(got).bits == p && H(double(got)).bits == p;
    // the midpoint to the next pattern of the same sign (both finite): ties to the even pattern,
    // anything nearer to one side rounds to it; from float and from double alike
    const std::uint32_t q = p + 1;
    if ((p & 0x7fffu) >= (((1u << E) - 1) << M) - 1 || (q >> 15) != (p >> 15)) continue;
    const double next = reference_value<M, E>(std::uint16_t(q)), mid = 0.5 * (want + next);
    const std::uint16_t even = (p & 1) ? std::uint16_t(q) : std::uint16_t(p);
    ties += H(mid).bits == even && H(float(mid)).bits == even;
    const double up = std::nextafter(mid, next), down = std::nextafter(mid, want);
    neighbours += H(up).bits == q && H(down).bits == p && H(float(0.75 * want + 0.25 * next)).bits == p;
  }
  CHECK(decoded == 65536);
  CHECK(round_trips == 65536);
  const int finite_pairs = 2 * ((((1 << E) - 1) << M) - 1);  // both signs, the largest finite has no next
  CHECK(ties == finite_pairs);
  CHECK(neighbours == finite_pairs);
}

}  // namespace

TEST_CASE("float16 and bfloat16: every bit pattern against its layout; round to nearest even; overflow; integers") {
  using fusor::bfloat16;
  using fusor::float16;
  static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2);
  static_assert(std::is_trivially_copyable_v<float16> && std::is_trivially_copyable_v<bfloat16>);
  check_every_pattern<float16, 10, 5>();
  check_every_pattern<bfloat16, 7, 8>();
  // beyond the largest finite value: to infinity from half an ulp above it on
  CHECK(float(float16(65504.0)) == 65504.0f);
  CHECK(float(float16(65519.99)) == 65504.0f);
  CHECK(fusor::isinf(float16(65520.0)));
  CHECK(fusor::isinf(float16(-1e10f)));
  CHECK(fusor::signbit(float16(-1e10f)));
  CHECK(fusor::isinf(bfloat16(std::numeric_limits<float>::max())));  // past bfloat16's max + half an ulp
  CHECK(float(bfloat16(3.3895313892515355e38)) == 3.3895313892515355e38f);
  // below half the smallest subnormal: a signed zero; subnormals from float's subnormals (bfloat16)
  CHECK(float16(2.9802322387695312e-08).bits == 0);  // 2^-25: a tie, to the even 0
  CHECK(float16(2.9802322387695313e-08 * 1.0000001).bits == 1);
  CHECK(float16(-0.0).bits == 0x8000);
  CHECK(bfloat16(std::ldexp(1.0f, -133)).bits == 1);  // float's subnormal, bfloat16's smallest
  // a double rounds once: 1 + 2^-11 + 2^-40 lies above float16's midpoint, and would round to the
  // even 1.0 if it went through float first (1 + 2^-11 exactly)
  CHECK(float(float16(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40))) == 1.0f + std::ldexp(1.0f, -10));
  // NaN stays NaN, quiet, with its payload's top bits
  const auto nan = float16(std::numeric_limits<float>::signaling_NaN());
  CHECK(fusor::isnan(nan));
  CHECK((nan.bits & 0x0200) != 0);
  // integers: through the nearest value (2049 is a tie between 2048 and 2050); back saturating
  CHECK(float(float16(2049)) == 2048.0f);
  CHECK(float(float16(2051)) == 2052.0f);
  CHECK(float(float16(std::int64_t(1) << 40)) == std::numeric_limits<float>::infinity());
  CHECK(static_cast<int>(float16(-2.75f)) == -2);
  CHECK(static_cast<std::int8_t>(float16(300.0f)) == 127);
  CHECK(static_cast<int>(nan) == 0);
  CHECK(static_cast<std::uint8_t>(float16(-5.0f)) == 0);
  // arithmetic in float32, rounded once; comparisons IEEE's
  CHECK((float16(1.0f) + float16(0.0004f)).bits == float16(1.0f + float(float16(0.0004f))).bits);
  CHECK(float(float16(3.0f) / float16(7.0f)) == float(float16(3.0f / 7.0f)));
  CHECK(!(nan == nan));
  CHECK(float16(1.0f) < float16(1.001f));
  CHECK(float(-bfloat16(2.5f)) == -2.5f);
  // the limits
  CHECK(float(std::numeric_limits<float16>::max()) == 65504.0f);
  CHECK(float(std::numeric_limits<float16>::min()) == std::ldexp(1.0f, -14));
  CHECK(float(std::numeric_limits<float16>::denorm_min()) == std::ldexp(1.0f, -24));
  CHECK(float(std::numeric_limits<float16>::epsilon()) == std::ldexp(1.0f, -10));
  CHECK(float(std::numeric_limits<bfloat16>::epsilon()) == std::ldexp(1.0f, -7));
  CHECK(float(std::numeric_limits<bfloat16>::max()) == 3.3895313892515355e38f);
  CHECK(float(std::numeric_limits<bfloat16>::lowest()) == -3.3895313892515355e38f);
}

TEST_CASE("float16 and bfloat16 promote as NumPy 2 and ml_dtypes say; arrays of them compute in float32 and round") {
  using fusor::bfloat16;
  using fusor::float16;
  using fusor::promote_t;
  using fusor::weak_result_t;
  // NumPy 2: np.result_type(np.float16, t)
  static_assert(std::is_same_v<promote_t<float16, bool>, float16>);
  static_assert(std::is_same_v<promote_t<float16, std::int8_t>, float16>);
  static_assert(std::is_same_v<promote_t<std::uint8_t, float16>, float16>);
  static_assert(std::is_same_v<promote_t<float16, std::int16_t>, float>);
  static_assert(std::is_same_v<promote_t<float16, std::uint16_t>, float>);
  static_assert(std::is_same_v<promote_t<float16, std::int32_t>, double>);
  static_assert(std::is_same_v<promote_t<std::uint64_t, float16>, double>);
  static_assert(std::is_same_v<promote_t<float16, float>, float>);
  static_assert(std::is_same_v<promote_t<double, float16>, double>);
  static_assert(std::is_same_v<promote_t<float16, std::complex<float>>, std::complex<float>>);
  static_assert(std::is_same_v<promote_t<float16, std::complex<double>>, std::complex<double>>);
  // ml_dtypes: bfloat16 with float16 is float32; with 8-bit integers bfloat16
  static_assert(std::is_same_v<promote_t<bfloat16, float16>, float>);
  static_assert(std::is_same_v<promote_t<bfloat16, std::int8_t>, bfloat16>);
  static_assert(std::is_same_v<promote_t<bfloat16, std::int16_t>, float>);
  // C++ scalars are weak: the 16-bit type stays, a complex scalar gives complex64
  static_assert(std::is_same_v<weak_result_t<float16, double>, float16>);
  static_assert(std::is_same_v<weak_result_t<float16, int>, float16>);
  static_assert(std::is_same_v<weak_result_t<bfloat16, float>, bfloat16>);
  static_assert(std::is_same_v<weak_result_t<float16, std::complex<double>>, std::complex<float>>);
  static_assert(fusor::same_kind_castable_v<std::int32_t, float16> && fusor::same_kind_castable_v<float16, double>);
  static_assert(!fusor::same_kind_castable_v<float16, std::int32_t> && !fusor::same_kind_castable_v<std::complex<float>, float16>);
  CHECK(fusor::dtype_name<float16>() == "float16");
  CHECK(fusor::dtype_name<bfloat16>() == "bfloat16");

  // arrays: a fused statement computes each element in float32 and rounds it once
  const fusor::index_t n = 37;  // a SIMD width and more, odd
  std::vector<float16> xv, yv;
  for (fusor::index_t i = 0; i < n; ++i) {
    xv.push_back(float16(0.37f * float(i) - 5.1f));
    yv.push_back(float16(1.0f + 0.013f * float(i * i)));
  }
  const fusor::array<float16> x(std::span<const float16>(xv), fusor::extents{n}), y(std::span<const float16>(yv), fusor::extents{n});
  const auto z = fusor::array<float16>(x * y + x / y - 2.5);  // 2.5 a weak scalar: float16 stays
  static_assert(std::is_same_v<fusor::value_t<decltype(x * y + x / y - 2.5)>, float16>);
  const auto r = fusor::array<float16>(fusor::sqrt(fusor::abs(x)));
  int same = 0, same_root = 0;
  for (fusor::index_t i = 0; i < n; ++i) {
    const float16 a = xv[std::size_t(i)], b = yv[std::size_t(i)];
    // each operation rounds: (a * b) and (a / b) are float16 before they are added
    const float16 want = float16(float(float16(float(float16(float(a) * float(b))) + float(float16(float(a) / float(b))))) - 2.5f);
    same += z.data()[i].bits == want.bits;
    same_root += r.data()[i].bits == float16(std::sqrt(std::abs(float(a)))).bits;
  }
  CHECK(same == n);
  CHECK(same_root == n);
  // float16 with float32 arrays is float32; astype rounds to nearest even, and back is exact
  const fusor::array<float> wide(fusor::cast<float>(x) * 1.0001f);
  static_assert(std::is_same_v<fusor::value_t<decltype(x + wide)>, float>);
  const auto back = fusor::array<float16>(fusor::cast<float16>(wide));
  int rounded = 0;
  for (fusor::index_t i = 0; i < n; ++i) rounded += back.data()[i].bits == float16(wide.data()[i]).bits;
  CHECK(rounded == n);
  // sums accumulate in float32 (NumPy's float16 sum) and return float16
  const auto s = fusor::sum(x);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(s)>, float16>);
  double exact = 0;
  for (const float16 v : xv) exact += double(float(v));
  CHECK(std::abs(float(s) - exact) <= std::abs(exact) * 1e-3 + 1e-3);
  // comparisons give bool arrays; NaN compares unordered
  const auto positive = fusor::array<bool>(x > 0.0f);
  int count = 0;
  for (fusor::index_t i = 0; i < n; ++i) count += positive.data()[i] == (float(xv[std::size_t(i)]) > 0.0f);
  CHECK(count == n);
}
