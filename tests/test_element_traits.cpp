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
