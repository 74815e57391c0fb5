#include "util/parallel.h"

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <vector>

namespace pfx {

int default_threads() {
  if (const char* env = std::getenv("PFX_THREADS"); env && std::atoi(env) > 0) return std::atoi(env);
  return std::max(1u, std::thread::hardware_concurrency());
}

void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int threads) {
  if (n <= 0) return;
  if (threads <= 0) threads = default_threads();
  const int64_t workers = std::min<int64_t>(threads, n);
  if (workers == 1) {
    fn(0, n);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(workers - 1));
  const int64_t chunk = (n + workers - 1) / workers;
  for (int64_t w = 1; w < workers; ++w) {
    const int64_t b = w * chunk, e = std::min(n, b + chunk);
    if (b < e) pool.emplace_back(fn, b, e);
  }
  fn(0, std::min(n, chunk));
  for (auto& t : pool) t.join();
}

}  // namespace pfx
