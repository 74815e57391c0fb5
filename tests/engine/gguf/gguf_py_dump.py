#!/usr/bin/env python3
"""Dumps what gguf-py (llama.cpp's own GGUF reader, PyPI `gguf`) sees in a GGUF file, for tests.

usage: gguf_py_dump.py FILE.gguf OUTDIR
Writes OUTDIR/meta.json (metadata fields with their gguf-py value types and contents, tensor
table) and OUTDIR/t<i>.npy: tensor i dequantized by gguf.quants.dequantize (float32, flat), or
no file when gguf-py cannot dequantize that type ("npy": null in meta.json).
"""
import json
import os
import sys

import numpy as np
import gguf
from gguf import quants


def main() -> int:
    path, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    reader = gguf.GGUFReader(path)
    fields = []
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):  # header pseudo-fields (version, counts)
            continue
        value = field.contents()
        fields.append({"key": key, "types": [t.name for t in field.types], "value": value})
    tensors = []
    for i, t in enumerate(reader.tensors):
        entry = {
            "name": t.name,
            "type": int(t.tensor_type),
            "shape": [int(d) for d in t.shape],
            "n_elements": int(t.n_elements),
            "n_bytes": int(t.n_bytes),
            "data_offset": int(t.data_offset),
            "npy": None,
        }
        try:
            values = quants.dequantize(t.data, t.tensor_type)
        except NotImplementedError:
            values = None
        if values is not None:
            name = f"t{i}.npy"
            np.save(os.path.join(outdir, name), np.ascontiguousarray(values, dtype=np.float32).reshape(-1))
            entry["npy"] = name
        tensors.append(entry)
    meta = {
        "version": int(reader.fields["GGUF.version"].contents()),
        "alignment": int(reader.alignment),
        "data_offset": int(reader.data_offset),
        "fields": fields,
        "tensors": tensors,
    }
    with open(os.path.join(outdir, "meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, allow_nan=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
