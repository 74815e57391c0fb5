#!/usr/bin/env python3
"""Quantizes a float32 .npy with gguf-py (PyPI `gguf`, whose Q8_0/F16/BF16 quantizers are
bit-exact ports of ggml's reference ones) and writes the raw GGUF tensor bytes, for tests.

usage: gguf_py_quantize.py IN.npy TYPE OUT.bin     (TYPE: F16, BF16, Q8_0)
"""
import sys

import numpy as np
from gguf import GGMLQuantizationType, quants


def main() -> int:
    src, type_name, out = sys.argv[1], sys.argv[2], sys.argv[3]
    data = np.load(src).astype(np.float32, copy=False)
    q = quants.quantize(data, GGMLQuantizationType[type_name])
    np.ascontiguousarray(q).tofile(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
