// What the attention launchers (generic, flash, decode) share: the score scale and the softmax
// convention that makes their probabilities round identically, and the host-side shape checks.
//
// Softmax convention (all three kernels): scores are taken in log2 units, s = fp32(q·k) *
// attention_score_scale(hd), so that the exponentials are exp2(s - m); and the max m subtracted is
// the row max rounded UP TO AN INTEGER. A two-pass kernel (generic) knows the final max at once; an
// online kernel (flash, decode) meets it late and rescales what it accumulated by exp2(m_old - m_new),
// which is then an exact power of two. So fp16(exp2(s - m_old)) * 2^(m_old - m_new) equals
// fp16(exp2(s - m_new)) bit for bit (barring fp16 subnormals, < 2^-14 of the row's largest weight):
// every kernel multiplies V by the same fp16 probabilities, and the paths differ only by the order
// of their fp32 sums. With the plain max they differed by an fp16 rounding of every probability,
// which 32 layers of a 7B model amplified past the 1e-3 parity bound. Rounding the max up costs
// nothing: the largest weight lies in (1/2, 1] instead of being exactly 1, fp16 keeps its 11 bits.
#pragma once
#include <cmath>

#include "kernels/kernels.h"
#include "kernels/launch_checks.h"

namespace pfx::kernels::detail {

// log2(e) / sqrt(hd), rounded once to fp32: the factor every kernel applies to the fp32 q·k.
inline float attention_score_scale(int hd) {
  return static_cast<float>(1.4426950408889634 / std::sqrt(static_cast<double>(hd)));
}

// device_position: the kernel can read p0 from a.p0_dev (decode only); then a.p0 is not checked
// (the kernel guards the device value) and T alone must fit the cache.
inline void check_attention_args(const char* who, const AttentionArgs& a, bool device_position = false) {
  require(a.T >= 1 && a.H >= 1 && a.Hkv >= 1 && a.hd >= 1, who, ": T=", a.T, " H=", a.H, " Hkv=", a.Hkv, " hd=", a.hd,
          " must be positive");
  require(a.H % a.Hkv == 0, who, ": H=", a.H, " is not a multiple of Hkv=", a.Hkv);
  require(device_position || a.p0_dev == nullptr, who, ": takes the position by value only (p0_dev must be null)");
  const int p0 = a.p0_dev ? 0 : a.p0;
  require(p0 >= 0 && static_cast<int64_t>(p0) + a.T <= a.max_ctx, who, ": context ", p0, "+", a.T,
          " exceeds the cache (max_ctx ", a.max_ctx, ")");
  require(a.q16 && a.k_cache && a.v_cache && a.o16, who, ": null pointer");
  require(a.T <= 65535, who, ": T=", a.T, " exceeds the grid limit 65535");
}

}  // namespace pfx::kernels::detail
