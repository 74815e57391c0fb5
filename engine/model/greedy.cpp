// Greedy decoding (see greedy.h).
#include "model/greedy.h"

#include "metrics/compare.h"
#include "util/error.h"

namespace pfx {

GreedyResult greedy(Backend& backend, std::span<const int32_t> prompt, int n_new) {
  if (prompt.empty()) fail("greedy: the prompt is empty; at least one token (usually BOS) is needed");
  if (n_new < 0) fail("greedy: the number of new tokens is ", n_new, "; expected >= 0");
  backend.reset();
  GreedyResult r;
  r.last_logits = backend.forward(prompt, /*all_logits=*/false);
  r.generated.reserve(static_cast<size_t>(n_new));
  for (int i = 0; i < n_new; ++i) {
    const int32_t next = argmax(r.last_logits.data(), static_cast<int64_t>(r.last_logits.size()));
    r.generated.push_back(next);
    if (i + 1 < n_new) r.last_logits = backend.forward(std::span<const int32_t>(&next, 1), false);
  }
  return r;
}

}  // namespace pfx
