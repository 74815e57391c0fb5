#!/usr/bin/env python3
"""Reads a GGUF with the Python `gguf` package (llama.cpp's own reader, PyPI) and dumps what it sees:
<out>/meta.json (metadata scalars, tensor names/types/dims) and <out>/<i>.npy, tensor i dequantized
by gguf.quants.dequantize to float32 [rows, cols]. The synth tests compare both with our reader.

usage: gguf_py_dump.py MODEL.gguf OUT_DIR
"""
import json
import os
import sys

import numpy as np
import gguf
from gguf.quants import dequantize


def scalar(field):
    """A field's value when it is a scalar or a string, else None (arrays: length only)."""
    if len(field.types) == 1 and field.types[0] != gguf.GGUFValueType.ARRAY:
        v = field.contents()
        return v if isinstance(v, (int, float, str, bool)) else None
    return None


def main():
    path, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    reader = gguf.GGUFReader(path)
    meta = {"kv": {}, "arrays": {}, "tensors": []}
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        v = scalar(field)
        if v is not None:
            meta["kv"][key] = v
        elif field.types and field.types[0] == gguf.GGUFValueType.ARRAY:
            meta["arrays"][key] = len(field.data)
    for i, t in enumerate(reader.tensors):
        values = dequantize(t.data, t.tensor_type).astype(np.float32, copy=False)
        cols = int(t.shape[0])
        np.save(os.path.join(out, f"{i}.npy"), values.reshape(-1, cols))
        meta["tensors"].append({"name": t.name, "type": t.tensor_type.name, "dims": [int(d) for d in t.shape],
                                "n_bytes": int(t.n_bytes)})
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f)


if __name__ == "__main__":
    main()
