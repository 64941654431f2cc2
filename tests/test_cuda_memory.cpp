// The cuda backend from a plain .cpp compiled by the host compiler: arrays are created, moved and
// transferred without nvcc; memory statistics, the pool cache, streams and device selection.
#include "common.hpp"

#include <fusor/backend/cuda/memory.hpp>

#include <thread>

using namespace fusor;
using test::index_t;

TEST_CASE("a host-compiled translation unit creates, moves and transfers cuda arrays") {
  const auto v = test::values<float>(1'000'003, -1, 1, 3);
  const array<float> h = test::make(v);
  array<float, cuda> d = to<cuda>(h);
  CHECK(d.shape() == h.shape());
  array<float, cuda> moved = std::move(d);
  CHECK(d.size() == 0);
  const array<float> back = to<cpu>(moved);
  CHECK(std::equal(back.begin(), back.end(), v.begin()));
  // copy into an existing device array, and a device-to-device deep copy
  array<float, cuda> other(h.shape());
  copy(other, h);
  const array<float, cuda> dup = to<cuda>(other);
  CHECK(dup.data() != other.data());
  CHECK(std::equal(v.begin(), v.end(), to<cpu>(dup).begin()));
  // nested braces and item() go through host staging
  array<std::int64_t, cuda> m{{1, 2, 3}, {4, 5, 6}};
  CHECK(m.shape() == extents{2, 3});
  CHECK(to<cpu>(m)(1, 2) == 6);
  CHECK(array<double, cuda>{2.5}.item() == 2.5);
  // packing a strided device view needs a kernel: a sentence, not a wrong answer
  CHECK_THROWS_WITH_AS(to<cpu>(transpose(m)), doctest::Contains("needs nvcc"), backend_error);
  CHECK_THROWS_WITH_AS(copy(m, array<std::int64_t>({3, 2})), doctest::Contains("equal shapes"), shape_error);
}

TEST_CASE("memory statistics count live bytes, the peak and the pool's reservation") {
  cuda_synchronize();
  reset_cuda_peak_memory();
  const auto before = cuda_memory_stats();
  {
    array<double, cuda> a(extents{1 << 20});  // 8 MiB
    const auto during = cuda_memory_stats();
    CHECK(during.allocated == before.allocated + (8u << 20));
    CHECK(during.peak >= during.allocated);
    CHECK(during.reserved >= during.allocated);
  }
  cuda_synchronize();
  const auto after = cuda_memory_stats();
  CHECK(after.allocated == before.allocated);
  CHECK(after.peak == before.allocated + (8u << 20));
  CHECK(after.reserved >= (8u << 20));  // the freed block stays cached in the pool
  cuda_free_cache();
  CHECK(cuda_memory_stats().reserved < after.reserved);
}

TEST_CASE("streams: per-thread by default, switchable for a scope") {
  CHECK(current_cuda_stream() == cudaStreamPerThread);
  cuda_stream s;
  {
    cuda_stream_scope use(s);
    CHECK(current_cuda_stream() == s.get());
    const array<int, cuda> a = to<cuda>(array<int>{1, 2, 3});
    CHECK(to<cpu>(a)(2) == 3);
    std::thread([&] { CHECK(current_cuda_stream() == cudaStreamPerThread); }).join();
  }
  s.synchronize();
  CHECK(current_cuda_stream() == cudaStreamPerThread);
}

TEST_CASE("device selection") {
  const int n = cuda_device_count();
  REQUIRE(n >= 1);
  set_cuda_device(0);
  CHECK(cuda_device() == 0);
  CHECK(!cuda_device_name().empty());
  CHECK_THROWS_WITH_AS(set_cuda_device(-1), doctest::Contains("set_cuda_device(-1) needs a device number in [0, "),
                       cuda_error);
}
