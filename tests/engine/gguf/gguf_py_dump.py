#!/usr/bin/env python3
"""Dumps what gguf-py (llama.cpp's own GGUF reader, PyPI `gguf`) sees in a GGUF file, for the GGUF
reader/writer tests (tests/engine/gguf/gguf_py_dump.h) and the synthetic-model tests
(tests/engine/synth/synth_test.cpp).

usage: gguf_py_dump.py FILE.gguf OUTDIR
Writes OUTDIR/meta.json:
  version, alignment, data_offset   the header as gguf-py reads it
  fields   [{key, types (gguf-py value type names), value}]: every metadata field
  kv       {key: value}: the scalar and string fields; arrays {key: length}: the array fields
  tensors  [{name, type (type name, "Q4_K"), type_id, shape = dims (ggml order), n_elements,
             n_bytes, data_offset, npy}]
and OUTDIR/<i>.npy: tensor i dequantized by gguf.quants.dequantize, float32 [rows, cols], or no
file when gguf-py cannot dequantize that type ("npy": null).
"""
import json
import os
import sys

import numpy as np
import gguf
from gguf import quants


def scalar(field):
    """A field's value when it is a scalar or a string, else None (arrays: length only)."""
    if len(field.types) == 1 and field.types[0] != gguf.GGUFValueType.ARRAY:
        v = field.contents()
        return v if isinstance(v, (int, float, str, bool)) else None
    return None


def main() -> int:
    path, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    reader = gguf.GGUFReader(path)
    fields, kv, arrays = [], {}, {}
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):  # header pseudo-fields (version, counts)
            continue
        fields.append({"key": key, "types": [t.name for t in field.types], "value": field.contents()})
        v = scalar(field)
        if v is not None:
            kv[key] = v
        elif field.types and field.types[0] == gguf.GGUFValueType.ARRAY:
            arrays[key] = len(field.data)
    tensors = []
    for i, t in enumerate(reader.tensors):
        dims = [int(d) for d in t.shape]
        entry = {
            "name": t.name,
            "type": t.tensor_type.name,
            "type_id": int(t.tensor_type),
            "shape": dims,
            "dims": dims,
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
            name = f"{i}.npy"
            np.save(os.path.join(outdir, name), np.ascontiguousarray(values, dtype=np.float32).reshape(-1, dims[0]))
            entry["npy"] = name
        tensors.append(entry)
    meta = {
        "version": int(reader.fields["GGUF.version"].contents()),
        "alignment": int(reader.alignment),
        "data_offset": int(reader.data_offset),
        "fields": fields,
        "kv": kv,
        "arrays": arrays,
        "tensors": tensors,
    }
    with open(os.path.join(outdir, "meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, allow_nan=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
