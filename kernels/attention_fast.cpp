// The fast attention path's entry: which fast kernel serves a shape, or why none does.
#include "kernels/attention_shared.h"
#include "kernels/kernels.h"
#include "kernels/launch_checks.h"

namespace pfx::kernels {

const char* attention_fast_unsupported_reason(const AttentionArgs& a) {
  if (a.hd != 64 && a.hd != 128) return "fast attention supports head_dim 64 and 128 only";
  if (!detail::is_aligned(a.q16, 16) || !detail::is_aligned(a.k_cache, 16) || !detail::is_aligned(a.v_cache, 16) ||
      !detail::is_aligned(a.o16, 16)) {
    return "fast attention needs 16-byte aligned q16, k_cache, v_cache and o16";
  }
  return nullptr;
}

size_t attention_fast_scratch_bytes(int T, int H, int hd) {
  return T <= kDecodeMaxT ? attention_decode_scratch_bytes(T, H, hd) : 0;
}

void attention_fast(const AttentionArgs& a, void* scratch, size_t scratch_bytes, cudaStream_t stream) {
  // A chunk at position 0 is a prompt's start, whose logits the parity gate compares with the
  // generic path's bit for bit: flash computes them in the generic kernel's order (the split decode
  // kernel sums q·k and the splits in its own). On a context of at most kDecodeMaxT keys flash costs
  // what the split kernel does. Decode steps (a cached context, or a graph's device position) split.
  if (a.T <= kDecodeMaxT && (a.p0_dev != nullptr || a.p0 > 0)) {
    attention_decode(a, scratch, scratch_bytes, stream);
  } else {
    attention_flash_prefill(a, stream);
  }
}

}  // namespace pfx::kernels
