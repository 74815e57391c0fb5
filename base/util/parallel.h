// parallel_for over [0, n) on a fixed set of std::threads: the CPU reference's only threading.
#pragma once
#include <cstdint>
#include <functional>

namespace pfx {
// Number of worker threads: $PFX_THREADS, else hardware concurrency.
int default_threads();
// Calls fn(begin, end) on contiguous chunks of [0, n), in parallel; returns when all are done.
void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int threads = 0);
}  // namespace pfx
