// Shared helpers for end-to-end tests: kernels run on the emulator device
// through the public API and are checked against references computed on the
// host in double precision from the same random inputs.
#pragma once

#include <tessel/tessel.hpp>

#include <doctest/doctest.h>

#include "../error_of.hpp"
#include "../stderr_of.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include <unistd.h>

namespace e2e {

inline tessel::Device &emulator() {
  static tessel::Device dev = tessel::Device::emulator();
  return dev;
}

inline std::mt19937_64 &rng() {
  static std::mt19937_64 gen(20261121);
  return gen;
}

inline std::vector<float> randomFloats(size_t n, float lo = -10.f, float hi = 10.f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng());
  return v;
}

// Random values E4M3 (4 significant bits) and every wider type hold exactly,
// (8..15) x 2^(-6..-1) of either sign, so an 8-bit float matmul's products
// and sums stay exact in f32 until C's rounding; `seed` picks the draw.
inline std::vector<double> e4m3Exact(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> mantissa(0, 7), exponent(-3, 2), sign(0, 1);
  std::vector<double> out(n);
  for (double &v : out)
    v = std::ldexp(8 + mantissa(gen), exponent(gen) - 3) * (sign(gen) ? -1 : 1);
  return out;
}

inline std::vector<double> randomDoubles(size_t n, double lo = -10, double hi = 10) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double &x : v)
    x = dist(rng());
  return v;
}

template <class T> std::vector<T> randomInts(size_t n, int64_t lo, int64_t hi) {
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  std::vector<T> v(n);
  for (T &x : v)
    x = static_cast<T>(dist(rng()));
  return v;
}

// An output buffer filled with a recognizable garbage pattern, so a test
// cannot pass on what a previous run left behind.
template <class T> tessel::Buffer<T> poisoned(size_t n, tessel::Device &dev = emulator()) {
  std::vector<T> junk(n);
  std::memset(static_cast<void *>(junk.data()), 0xA5, n * sizeof(T));
  return dev.upload(junk);
}

// Relative error with an absolute floor for values near zero.
inline double relError(double got, double want, double floor = 1e-30) {
  if (std::isnan(want))
    return std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(want))
    return got == want ? 0 : INFINITY;
  return std::fabs(got - want) / std::max(std::fabs(want), floor);
}

using testutil::errorOf; // the message of the tessel::Error a call throws, or "<no error>"

inline bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

// How many times `needle` occurs in `haystack` (non-overlapping).
inline size_t occurrences(const std::string &haystack, const std::string &needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + needle.size()))
    ++n;
  return n;
}

// How many matches of `pattern` the text holds.
inline size_t matchCount(const std::string &text, const std::regex &pattern) {
  return size_t(std::distance(std::sregex_iterator(text.begin(), text.end(), pattern), std::sregex_iterator()));
}

// The worst |C - A B| over the largest |A B|, with A [M, K] and B [K, N]
// row-major in float64 and C [M, N] as computed (any element type that
// converts to float); a NaN in C (an element never written over a NaN
// poison) makes it infinite.
template <class T>
double matmulRelError(const std::vector<T> &got, const std::vector<double> &a, const std::vector<double> &b, int M,
                      int N, int K) {
  std::vector<double> want(size_t(M) * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j)
        want[size_t(i) * N + j] += a[size_t(i) * K + k] * b[size_t(k) * N + j];
  double scale = 0, error = 0;
  for (double w : want)
    scale = std::max(scale, std::fabs(w));
  for (size_t e = 0; e < want.size(); ++e) {
    const double g = double(float(got[e]));
    error = std::isnan(g) ? INFINITY : std::max(error, std::fabs(g - want[e]));
  }
  return error / scale;
}

// Loads straight into LDS (buffer_load_dwordx4 ... lds) in an assembly text.
inline size_t intoLds(const std::string &text) {
  return matchCount(text, std::regex(R"(\bbuffer_load_dwordx4\b[^\n]*\blds\b)"));
}


using tessel::testing::stderrOf;

} // namespace e2e
