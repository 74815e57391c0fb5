#!/usr/bin/env python3
"""A fake `prefill` for the parity gate's layer-localisation tests: `--version --json`, and
`logits` with `--dump-residual DIR` (DIR/blk.N.pos0.npy, float32 [tokens, n_embd]) per the CLI
contract, with cheap deterministic arithmetic. behaviour.json next to it plants the problem:

  perturb_fast        relative perturbation of the fast path's logits (5e-3 fails a 1e-3 gate)
  diverge_from_layer  the fast path's residual parts from the generic one at this layer
  residual_dump       advertise capabilities.residual_dump (false: an older build, option unknown)
  dump_fails          `--dump-residual` runs exit 1
  flaky               the logits perturbation vanishes when --dump-residual is given
  gemm_variants       advertise capabilities.gemm_variants (default first); `--gemm` must name one
  perturb_gemm        {variant: relative perturbation} of the fast path run with --gemm variant

Every call appends its arguments as one JSON line to calls.log next to it."""
import json
import math
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "behaviour.json")) as f:
    B = json.load(f)
VOCAB, N_EMBD, N_LAYERS = 16, 8, 4


def die(msg, code):
    sys.stderr.write("prefill: " + msg + "\n")
    sys.exit(code)


def write_npy(path, rows, cols, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
    header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def options(argv):
    out, i = {}, 0
    while i < len(argv):
        if argv[i] in ("--json", "--no-bos"):
            out[argv[i]] = True
            i += 1
        elif i + 1 < len(argv):
            out[argv[i]] = argv[i + 1]
            i += 2
        else:
            die("option %s needs a value" % argv[i], 2)
    return out


def residual(layer, tokens, fast):
    vals = []
    for p in range(len(tokens)):
        for e in range(N_EMBD):
            vals.append((layer + 1) * math.sin(0.3 * (e + 1) + 0.1 * sum(tokens[: p + 1]) + layer))
    start = B.get("diverge_from_layer", -1)
    if fast and start >= 0:
        for k in range(0, len(vals), 3):
            if layer >= start:  # a real fault, growing as later layers build on it
                vals[k] += 1e-3 * (layer + 1) * (layer - start + 1)
            else:  # summation-order noise
                vals[k] += 2e-7 * (layer + 1)
    return vals


def logits(o):
    if not os.path.exists(o.get("--model", "")):
        die("cannot open model %r" % o.get("--model"), 1)
    if "--tokens" in o:
        toks = [int(t) for t in o["--tokens"].split(",") if t]
    else:
        toks = ([] if "--no-bos" in o else [1]) + [3 + ord(c) % 13 for c in o.get("--text", "")]
    path = o.get("--path", "fast")
    dump = o.get("--dump-residual")
    if dump is not None:
        if not B.get("residual_dump", True):
            die("unknown option --dump-residual", 2)
        if os.path.exists(dump) and (not os.path.isdir(dump) or os.listdir(dump)):
            die("--dump-residual: %s exists and is not an empty directory" % dump, 2)
        if B.get("dump_fails"):
            die("--dump-residual: cannot write %s" % dump, 1)
        os.makedirs(dump, exist_ok=True)
        for layer in range(N_LAYERS):
            write_npy(os.path.join(dump, "blk.%d.pos0.npy" % layer), len(toks), N_EMBD,
                      residual(layer, toks, path == "fast"))
    if os.path.exists(o["--out"]):
        die("%s exists; refusing to overwrite it (pass --force)" % o["--out"], 2)
    vals = []
    for p in range(len(toks)):
        vals += [5.0 * math.cos(0.2 * (v + 1) * (p + 1)) for v in range(VOCAB)]
    perturb = B.get("perturb_fast", 0.0)
    gemm = o.get("--gemm")
    if gemm is not None:
        if path != "fast" or gemm not in B.get("gemm_variants", []):
            die("--gemm: %r is not a GEMM variant of this build" % gemm, 4)
        perturb += B.get("perturb_gemm", {}).get(gemm, 0.0)
    if path == "fast" and perturb and not (B.get("flaky") and dump is not None):
        for p in range(len(toks)):
            vals[p * VOCAB + 1] += perturb * 5.0
    write_npy(o["--out"], len(toks), VOCAB, vals)
    out = {"tokens": toks, "backend": o.get("--backend", "cpu"), "path": path, "shape": [len(toks), VOCAB]}
    if dump is not None:
        out["residual_dump"] = dump
    print(json.dumps(out))


def main():
    argv = sys.argv[1:]
    with open(os.path.join(HERE, "calls.log"), "a") as f:
        f.write(json.dumps(argv) + "\n")
    if argv[:2] == ["--version", "--json"]:
        caps = {"subcommands": ["logits"], "backends": ["cpu", "cuda"], "paths": ["fast", "generic"]}
        if B.get("residual_dump", True):
            caps["residual_dump"] = "blk.N.posP.npy"
        if "gemm_variants" in B:
            caps["gemm_variants"] = B["gemm_variants"]
        print(json.dumps({"name": "prefill", "version": "0.0.1", "commit": "fake", "dirty": False, "capabilities": caps}))
    elif argv[:1] == ["logits"]:
        logits(options(argv[1:]))
    else:
        die("unknown subcommand %r" % argv[:1], 2)


if __name__ == "__main__":
    main()
