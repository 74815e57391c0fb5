#!/usr/bin/env python3
"""A fake `prefill` for the gates' tests (landing's end-to-end tests, the parity gate's layer
localisation): honours the CLI contract (docs/prefill-cli.md) with cheap deterministic arithmetic,
and misbehaves on purpose as behaviour.json (next to it) says:

  perturb_fast        relative perturbation of the fast path's logits (5e-3 fails a 1e-3 gate)
  shared_bias         a bias both paths share (parity passes, accuracy fails)
  nan_fast            a NaN in the fast path's logits
  crash_on, hang_on   SIGSEGV / sleep in that subcommand
  greedy_diverge_at   the generated ids change from this token on
  tps, noise          bench throughput and its relative noise
  cuda                false: no usable GPU (exit 3)
  subcommands, version, no_json_version   an older build
  residual_dump       advertise --dump-residual (default true)
  diverge_from_layer  the fast path's residual stream parts from the generic one at this layer
  dump_fails          `--dump-residual` runs exit 1
  flaky               the logits perturbation vanishes when --dump-residual is given
  gemm_variants       advertise capabilities.gemm_variants (default first); `--gemm` must name one
  perturb_gemm        {variant: relative perturbation} of the fast path on that GEMM variant
  decode_graph        capabilities.decode_graph (default ["on", "off"], the default first; null: not
                      advertised, as before the capability); `--decode-graph` must name one
  ignore_gemm         accepts --gemm but runs (and reports) its default variant
  ignore_path         accepts --path but runs (and reports) the fast path
  misreport           {field: value} replaces fields of the logits/greedy/bench JSON (null: leaves
                      the field out): a build that says it ran something other than it did

For oracle prompts (fixtures/oracle/*.json, matched by token ids) `logits` returns the oracle's
own logits, so the accuracy gate can be tested against the real references. Every call appends
its arguments as one JSON line to calls.log next to it."""
import json
import math
import os
import random
import signal
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "behaviour.json")) as f:
    B = json.load(f)
if os.environ.get("FAKE_PREFILL_CUDA") is not None:  # "this host has a GPU" (1) or not (0), for import tests
    B["cuda"] = os.environ["FAKE_PREFILL_CUDA"] == "1"
VOCAB = 64
N_EMBD, N_LAYERS = 8, 4  # the residual dump's shape


def die(msg, code):
    sys.stderr.write("prefill: " + msg + "\n")
    sys.exit(code)


def args_to_dict(argv):
    out, i = {}, 0
    while i < len(argv):
        a = argv[i]
        if a in ("--json", "--no-bos"):
            out[a] = True
            i += 1
        else:
            if i + 1 >= len(argv):
                die("option %s needs a value" % a, 2)
            out[a] = argv[i + 1]
            i += 2
    return out


def misbehave(cmd):
    if B.get("crash_on") == cmd:
        os.kill(os.getpid(), signal.SIGSEGV)
    if B.get("hang_on") == cmd:
        time.sleep(3600)


def need_backend(o):
    backend = o.get("--backend", "cpu")
    if backend == "cuda" and not B.get("cuda", True):
        die("--backend cuda: no usable CUDA GPU here", 3)
    return backend


def prompt_tokens(o):
    if "--tokens" in o:
        toks = [int(t) for t in o["--tokens"].split(",") if t]
    else:
        toks = [3 + (ord(c) % 50) for c in o.get("--text", "")]
        if "--no-bos" not in o:
            toks = [1] + toks
    return toks


def cuda_path(o, backend):
    """The CUDA path this run takes (what --path asked, unless ignore_path); "cpu" on the CPU."""
    if backend != "cuda":
        return "cpu"
    return "fast" if B.get("ignore_path") else o.get("--path", "fast")


def gemm_variant(o, path):
    """The GEMM variant this run takes: --gemm (unless ignore_gemm), else the default; "" off the
    fast path or where the build lists no variants."""
    variants = B.get("gemm_variants", [])
    gemm = o.get("--gemm")
    if gemm is not None and (path != "fast" or gemm not in variants):
        die("--gemm: %r is not a GEMM variant of this build" % gemm, 4)
    if path != "fast" or not variants:
        return ""
    return variants[0] if gemm is None or B.get("ignore_gemm") else gemm


def decode_graph(o, path):
    """The decode launch this run takes: --decode-graph, else the default; "" off the fast path."""
    values = B.get("decode_graph", ["on", "off"]) or []
    value = o.get("--decode-graph")
    if value is not None and (path != "fast" or value not in values):
        die("--decode-graph: %r is not a value of this build" % value, 4)
    if path != "fast" or not values:
        return ""
    return value or values[0]


def answer(out):
    """Prints a subcommand's JSON, fields replaced as `misreport` says."""
    for field, value in B.get("misreport", {}).items():
        if value is None:
            out.pop(field, None)
        else:
            out[field] = value
    print(json.dumps(out))


def check_model(o):
    m = o.get("--model")
    if not m or not os.path.exists(m):
        die("cannot open model %r" % m, 1)
    return m


def write_npy(path, rows, cols, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    hlen = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hlen].decode()
    shape = header.split("'shape': (")[1].split(")")[0]
    rows, cols = [int(x) for x in shape.split(",") if x.strip()]
    values = list(struct.unpack("<%df" % (rows * cols), data[10 + hlen:10 + hlen + 4 * rows * cols]))
    return rows, cols, values


def residual(layer, tokens, fast):
    """The residual stream after `layer`, float32 [tokens, N_EMBD], flattened."""
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


def dump_residuals(dump, toks, fast):
    if not B.get("residual_dump", True):
        die("unknown option --dump-residual", 2)
    if os.path.exists(dump) and (not os.path.isdir(dump) or os.listdir(dump)):
        die("--dump-residual: %s exists and is not an empty directory" % dump, 2)
    if B.get("dump_fails"):
        die("--dump-residual: cannot write %s" % dump, 1)
    os.makedirs(dump, exist_ok=True)
    for layer in range(N_LAYERS):
        write_npy(os.path.join(dump, "blk.%d.pos0.npy" % layer), len(toks), N_EMBD, residual(layer, toks, fast))


def oracle_for(tokens):
    d = os.path.join(os.environ.get("PFX_FIXTURES", ""), "oracle")
    if not os.path.isdir(d):
        return None
    for name in sorted(os.listdir(d)):
        if name.endswith(".json"):
            with open(os.path.join(d, name)) as f:
                case = json.load(f)
            if case.get("prompt_tokens") == tokens:
                return os.path.join(d, case["logits"]), case
    return None


def logits(o):
    check_model(o)
    backend = need_backend(o)
    path = cuda_path(o, backend)
    gemm, graph = gemm_variant(o, path), decode_graph(o, path)
    misbehave("logits")
    toks = prompt_tokens(o)
    dump = o.get("--dump-residual")
    if dump is not None:
        dump_residuals(dump, toks, path == "fast")
    found = oracle_for(toks)
    if found:
        rows, cols, vals = read_npy(found[0])
    else:
        rows, cols = len(toks), VOCAB
        vals = []
        for p in range(rows):
            s = sum(toks[: p + 1])
            vals += [5.0 * math.sin(0.1 * (v + 1) * (1 + p) + 0.01 * s) for v in range(cols)]
    scale = max(abs(x) for x in vals) or 1.0
    bias = B.get("shared_bias", 0.0)
    if bias:
        for r in range(rows):
            vals[r * cols] += bias * scale
    perturb = B.get("perturb_fast", 0.0) + B.get("perturb_gemm", {}).get(gemm, 0.0)
    if path == "fast" and perturb and not (B.get("flaky") and dump is not None):
        for r in range(rows):
            vals[r * cols + 1] += perturb * scale
    if path == "fast" and B.get("nan_fast"):
        vals[cols + 2] = float("nan")
    write_npy(o["--out"], rows, cols, vals)
    out = {"tokens": toks, "backend": backend, "path": path, "gemm": gemm, "decode_graph": graph, "shape": [rows, cols],
           "logits_sha256": "fake"}
    if dump is not None:
        out["residual_dump"] = dump
    answer(out)


def greedy(o):
    check_model(o)
    backend = need_backend(o)
    path = cuda_path(o, backend)
    gemm, graph = gemm_variant(o, path), decode_graph(o, path)
    misbehave("greedy")
    toks = prompt_tokens(o)
    n = int(o.get("-n", "16"))
    x, ids = sum(toks) % VOCAB, []
    for k in range(n):
        x = (x * 31 + 7 + k) % VOCAB
        ids.append(x)
    d = B.get("greedy_diverge_at", -1)
    if d is not None and d >= 0:
        ids = ids[:d] + [(i + 1) % VOCAB for i in ids[d:]]
    text = "".join(chr(97 + i % 26) for i in ids)
    out = {"prompt_ids": toks, "generated_ids": ids, "text": text, "backend": backend, "path": path, "gemm": gemm,
           "decode_graph": graph, "ids_sha256": "fake"}
    if "--json" in o:
        answer(out)
    else:
        print(text)


def calls_so_far():
    try:
        with open(os.path.join(HERE, "calls.log")) as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def bench(o):
    check_model(o)
    if not B.get("cuda", True):
        die("bench: no usable CUDA GPU here", 3)
    path = cuda_path(o, "cuda")
    gemm, graph = gemm_variant(o, path), decode_graph(o, path)
    misbehave("bench")
    reps = int(o.get("-r", "5"))
    # Reproducible noise: seeded by how many calls this build has logged so far, so a test's runs
    # see the same samples every time (a seed from os.urandom made the A/A test fail at random,
    # about 1 run in 16, whenever the judge's noise chance came up).
    rng = random.Random("bench:%d" % calls_so_far())
    results = []
    for p in [int(x) for x in o.get("-p", "512").split(",") if x]:
        tps = [B.get("tps", 1000.0) * (1 + rng.gauss(0, B.get("noise", 0.003))) for _ in range(reps)]
        ms = [p / t * 1000 for t in tps]
        mean = sum(tps) / len(tps)
        sd = math.sqrt(sum((t - mean) ** 2 for t in tps) / max(1, len(tps) - 1))
        results.append({"test": "pp%d" % p, "n_prompt": p, "n_gen": 0, "reps": reps, "samples_tps": tps,
                        "mean_tps": mean, "stddev_tps": sd, "samples_ms": ms})
    answer({"device": {"name": "Fake GPU", "sm_clock_mhz": 1980}, "backend": "cuda", "path": path, "gemm": gemm,
            "decode_graph": graph, "model": o["--model"], "results": results})


def synth(o):
    misbehave("synth")
    with open(o["--out"], "w") as f:
        f.write("FAKEGGUF %s seed %s\n" % (o.get("--profile"), o.get("--seed")))


def fake_commit():
    """The commit CMake found at configure time (commit.txt beside us), like a real build's stamp."""
    try:
        with open(os.path.join(HERE, "commit.txt")) as f:
            return f.read().strip() or "unknown"
    except OSError:
        return "unknown"


def main():
    argv = sys.argv[1:]
    with open(os.path.join(HERE, "calls.log"), "a") as f:
        f.write(json.dumps(argv) + "\n")
    if argv[:1] == ["--version"]:
        subs = B.get("subcommands", ["info", "tokenize", "logits", "greedy", "synth", "bench"])
        if "--json" not in argv:
            print("prefill %s (fake)" % B.get("version", "0.1.0"))
            return
        if B.get("no_json_version"):
            die("unknown option --json", 2)
        caps = {"subcommands": subs, "backends": ["cpu", "cuda"], "paths": ["fast", "generic"], "cuda_compiled": True,
                "kernel_resources": "kernel-resources.json"}
        if B.get("residual_dump", True):
            caps["residual_dump"] = "blk.N.posP.npy"
        if "gemm_variants" in B:
            caps["gemm_variants"] = B["gemm_variants"]
        if B.get("decode_graph", ["on", "off"]) is not None:
            caps["decode_graph"] = B.get("decode_graph", ["on", "off"])
        print(json.dumps({"name": "prefill", "version": B.get("version", "0.1.0"), "commit": fake_commit(), "dirty": False,
                          "capabilities": caps}))
        return
    if not argv:
        die("usage: prefill <subcommand>", 2)
    cmd, o = argv[0], args_to_dict(argv[1:])
    subs = B.get("subcommands", ["info", "tokenize", "logits", "greedy", "synth", "bench"])
    if cmd not in subs:
        die("unknown subcommand " + cmd, 2)
    {"logits": logits, "greedy": greedy, "bench": bench, "synth": synth}[cmd](o)


if __name__ == "__main__":
    main()
