// Host-side shape checks shared by the attention launchers (generic, flash, decode).
#pragma once
#include "kernels/kernels.h"
#include "kernels/launch_checks.h"

namespace pfx::kernels::detail {

inline void check_attention_args(const char* who, const AttentionArgs& a) {
  require(a.T >= 1 && a.H >= 1 && a.Hkv >= 1 && a.hd >= 1, who, ": T=", a.T, " H=", a.H, " Hkv=", a.Hkv, " hd=", a.hd,
          " must be positive");
  require(a.H % a.Hkv == 0, who, ": H=", a.H, " is not a multiple of Hkv=", a.Hkv);
  require(a.p0 >= 0 && static_cast<int64_t>(a.p0) + a.T <= a.max_ctx, who, ": context ", a.p0, "+", a.T,
          " exceeds the cache (max_ctx ", a.max_ctx, ")");
  require(a.q16 && a.k_cache && a.v_cache && a.o16, who, ": null pointer");
  require(a.T <= 65535, who, ": T=", a.T, " exceeds the grid limit 65535");
}

}  // namespace pfx::kernels::detail
