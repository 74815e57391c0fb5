// The per-layer vectors every backend converts from a bound layer (model/llama.h): the two norm
// weights, and the Q/K/V biases where the model has them (qwen2). One list, so a backend cannot
// forget one: the CPU backend dequantizes them to host fp32, the CUDA backend uploads them as fp32.
#pragma once

#include "model/llama.h"

namespace pfx::model {

// dst.attn_norm, dst.ffn_norm (and dst.bq, dst.bk, dst.bv when src has them) = convert(src's
// tensor of the same name), in that order; the other members of dst are left as they are.
template <class BackendLayer, class Convert>
void convert_layer_vectors(const LayerWeights& src, BackendLayer& dst, Convert&& convert) {
  dst.attn_norm = convert(src.attn_norm);
  dst.ffn_norm = convert(src.ffn_norm);
  if (src.has_qkv_bias()) {
    dst.bq = convert(src.bq);
    dst.bk = convert(src.bk);
    dst.bv = convert(src.bv);
  }
}

}  // namespace pfx::model
