#pragma once
// operator<< in NumPy's style: nested brackets, aligned columns, floats with at most 8
// fractional digits (trailing zeros dropped: "1." "2.5"), scientific notation when magnitudes
// call for it, and "..." summaries for arrays of more than 1000 elements (3 edge items per axis).
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../core/assign.hpp"
#include "../core/half.hpp"
#include "../core/transfer.hpp"

namespace fusor {

struct print_options {
  int precision = 8;
  index_t threshold = 1000;
  index_t edgeitems = 3;
  int linewidth = 75;
};
inline print_options& printing() {
  static print_options o;
  return o;
}

namespace detail::print {

struct float_style {
  bool scientific = false;
  int precision = 8;
};

inline std::string trim_fraction(std::string s) {
  // "2.50000000" -> "2.5", "1.00000000" -> "1."
  auto e = s.find('e');
  std::string exp = e == std::string::npos ? "" : s.substr(e);
  std::string m = e == std::string::npos ? s : s.substr(0, e);
  if (m.find('.') != std::string::npos) {
    while (!m.empty() && m.back() == '0') m.pop_back();
  }
  if (!exp.empty()) {  // NumPy writes e+05 as e+05, e-5 as e-05: at least two exponent digits
    const char sign = exp[1];
    std::string digits = exp.substr(2);
    while (digits.size() < 2) digits = "0" + digits;
    exp = std::string("e") + sign + digits;
  }
  return m + exp;
}

// The shortest text that reads back as the same value of type T (so a float32 prints as
// 0.6129599, not with double's digits), cut to `precision` fractional digits.
template <class T>
std::string format_real(T v, const float_style& st) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[128];
  auto fmt = st.scientific ? std::chars_format::scientific : std::chars_format::fixed;
  auto r = std::to_chars(buf, buf + sizeof buf, v, fmt);
  std::string s(buf, r.ptr);
  const auto dot = s.find('.');
  const auto end = s.find('e') == std::string::npos ? s.size() : s.find('e');
  if (dot != std::string::npos && int(end - dot - 1) > st.precision) {
    r = std::to_chars(buf, buf + sizeof buf, v, fmt, st.precision);
    s.assign(buf, r.ptr);
  } else if (dot == std::string::npos && !st.scientific) {
    s += ".";
  }
  if (st.scientific && s.find('.') == std::string::npos) s.insert(s.find('e'), ".");
  return trim_fraction(s);
}

// float16 and bfloat16: the fewest significant digits that read back as the same 16-bit value
// (NumPy prints float16(0.1) as 0.1, not as the float32 0.099975586 it is), written as the double
// nearest to them.
template <int M, int E>
std::string format_real(small_float<M, E> v, const float_style& st) {
  if (isfinite(v)) {
    char digits[32];
    for (int p = 1; p <= 9; ++p) {
      const auto end = std::to_chars(digits, digits + sizeof digits - 1, float(v), std::chars_format::scientific, p - 1).ptr;
      *end = '\0';
      const double shortest = std::strtod(digits, nullptr);
      if (small_float<M, E>(shortest).bits == v.bits) return format_real(shortest, st);
    }
  }
  return format_real(float(v), st);
}

template <class T>
float_style choose_style(const std::vector<T>& values) {
  float_style st;
  st.precision = printing().precision;
  double lo = INFINITY, hi = 0;
  for (const T& x : values) {
    auto consider = [&](double v) {
      if (!std::isfinite(v) || v == 0) return;
      lo = std::min(lo, std::abs(v));
      hi = std::max(hi, std::abs(v));
    };
    if constexpr (is_complex_v<T>) {
      consider(double(x.real()));
      consider(double(x.imag()));
    } else {
      consider(double(x));
    }
  }
  st.scientific = hi > 0 && (hi >= 1e8 || lo < 1e-4 || hi / lo > 1e3);
  return st;
}

// Pads every string to the same width. Numbers with a decimal point align on it; nan and inf
// are right-justified to the common width, as NumPy does.
inline void align(std::vector<std::string>& cells, bool decimal) {
  auto special = [](const std::string& s) { return s.find("nan") != std::string::npos || s.find("inf") != std::string::npos; };
  auto split = [&](const std::string& s) {
    const auto p = decimal ? s.find_first_of(".e") : std::string::npos;
    return p == std::string::npos ? std::make_pair(s.size(), std::size_t(0)) : std::make_pair(p, s.size() - p);
  };
  std::size_t left = 0, right = 0, width = 0;
  for (auto& c : cells) {
    if (decimal && special(c)) {
      width = std::max(width, c.size());
      continue;
    }
    auto [l, r] = split(c);
    left = std::max(left, l);
    right = std::max(right, r);
  }
  width = std::max(width, left + right);
  for (auto& c : cells) {
    if (decimal && special(c)) {
      c = std::string(width - c.size(), ' ') + c;
      continue;
    }
    auto [l, r] = split(c);
    c = std::string(width - right - l, ' ') + c + std::string(right - r, ' ');
  }
}

template <class T>
std::vector<std::string> format_all(const std::vector<T>& values) {
  std::vector<std::string> cells;
  cells.reserve(values.size());
  if constexpr (std::is_same_v<T, bool>) {
    for (bool b : values) cells.push_back(b ? " True" : "False");
  } else if constexpr (std::is_integral_v<T>) {
    for (T v : values) cells.push_back(std::to_string(+v));
    align(cells, false);
  } else if constexpr (is_complex_v<T>) {
    const float_style st = choose_style(values);
    std::vector<std::string> re, im;
    for (const T& v : values) {
      re.push_back(format_real(v.real(), st));
      const auto iv = v.imag();
      std::string s = format_real(std::abs(iv), st);
      if (std::isnan(iv)) s = "nan";
      im.push_back((std::signbit(iv) && !std::isnan(iv) ? "-" : "+") + s);
    }
    align(re, true);
    align(im, true);
    for (std::size_t i = 0; i < values.size(); ++i) {
      // the 'j' goes after the imaginary part's last digit, inside its padding (appends, not
      // string::insert, whose inlined copy g++ 12 misreads as an overlapping memcpy: -Wrestrict)
      const std::string& s = im[i];
      const std::size_t end = s.find_last_not_of(' ') + 1;  // s starts with its sign: never npos
      std::string cell = re[i];
      cell.append(s, 0, end);
      cell += 'j';
      cell.append(s, end, std::string::npos);
      if (cell.back() == ' ') cell.pop_back();
      cells.push_back(std::move(cell));
    }
  } else {
    const float_style st = choose_style(values);
    for (T v : values) cells.push_back(format_real(v, st));
    if (st.scientific) {  // NumPy gives every mantissa the same number of digits
      std::size_t digits = 0;
      for (auto& c : cells)
        if (auto d = c.find('.'), e = c.find('e'); d != std::string::npos && e != std::string::npos)
          digits = std::max(digits, e - d - 1);
      for (auto& c : cells)
        if (auto d = c.find('.'), e = c.find('e'); d != std::string::npos && e != std::string::npos)
          c.insert(e, digits - (e - d - 1), '0');
    }
    align(cells, true);
  }
  return cells;
}

// Which indices of an axis are shown: all, or the first and last `edge` with a gap marker (-1).
inline std::vector<index_t> shown(index_t n, bool summarise, index_t edge) {
  std::vector<index_t> r;
  if (!summarise || n <= 2 * edge) {
    for (index_t i = 0; i < n; ++i) r.push_back(i);
  } else {
    for (index_t i = 0; i < edge; ++i) r.push_back(i);
    r.push_back(-1);
    for (index_t i = n - edge; i < n; ++i) r.push_back(i);
  }
  return r;
}

template <class T>
void collect(const array_view<T, cpu>& v, int axis, index_t offset, bool summarise, std::vector<T>& out) {
  for (index_t i : shown(v.shape()[axis], summarise, printing().edgeitems)) {
    if (i < 0) continue;
    const index_t off = offset + i * v.strides()[axis];
    if (axis + 1 == v.ndim()) out.push_back(v.data()[off]);
    else collect(v, axis + 1, off, summarise, out);
  }
}

template <class T>
void layout(std::ostream& os, const array_view<T, cpu>& v, int axis, bool summarise,
            const std::vector<std::string>& cells, std::size_t& next, int indent) {
  os << '[';
  const auto idx = shown(v.shape()[axis], summarise, printing().edgeitems);
  const bool last_axis = axis + 1 == v.ndim();
  std::size_t col = std::size_t(indent) + 1;
  for (std::size_t k = 0; k < idx.size(); ++k) {
    if (last_axis) {
      std::string cell = idx[k] < 0 ? "..." : cells[next++];
      if (k > 0) {
        if (col + 1 + cell.size() + 1 > std::size_t(printing().linewidth)) {
          os << '\n' << std::string(std::size_t(indent) + 1, ' ');
          col = std::size_t(indent) + 1;
        } else {
          os << ' ';
          ++col;
        }
      }
      os << cell;
      col += cell.size();
    } else {
      if (k > 0) os << std::string(std::size_t(v.ndim() - axis - 1), '\n') << std::string(std::size_t(indent) + 1, ' ');
      if (idx[k] < 0) os << "...";
      else layout(os, v, axis + 1, summarise, cells, next, indent + 1);
    }
  }
  os << ']';
}

}  // namespace detail::print

template <class T>
std::ostream& operator<<(std::ostream& os, const array_view<T, cpu>& v) {
  using namespace detail::print;
  const bool summarise = v.size() > printing().threshold;
  std::vector<T> values;
  if (v.ndim() == 0) {
    values.push_back(*v.data());
    auto cells = format_all(values);
    const auto p = cells[0].find_first_not_of(' ');
    return os << cells[0].substr(p == std::string::npos ? 0 : p);
  }
  if (v.size() == 0) return os << "[]";
  collect(v, 0, 0, summarise, values);
  const auto cells = format_all(values);
  std::size_t next = 0;
  std::ostringstream body;
  layout(body, v, 0, summarise, cells, next, 0);
  return os << body.str();
}
template <class T>
std::ostream& operator<<(std::ostream& os, const array<T, cpu>& a) {
  return os << a.view();
}
/// Printing an expression evaluates it first.
template <expression E>
  requires(!requires(const E& e) { e.view(); } && !std::is_same_v<E, array_view<value_t<E>, cpu>> &&
           std::is_same_v<backend_of_t<E>, cpu>)
std::ostream& operator<<(std::ostream& os, const E& e) {
  return os << eval(e);
}
/// Printing a device array, view or expression copies it to the host first.
template <expression E>
  requires(!backend_traits<backend_of_t<E>>::host_accessible)
std::ostream& operator<<(std::ostream& os, const E& e) {
  return os << to<cpu>(e);
}

}  // namespace fusor
