#!/usr/bin/env python3
"""Writes the hand-made traces the CPU tests read (schema kerneltrace/1). Not from a GPU: the
numbers are chosen so every expected value in test_trace_reports.cpp can be checked by hand.

  engine_a.trace.json   "baseline": 2 prefill passes of a 2-layer toy model, one thread; pass 2
                        runs blk.0.attn on a second stream overlapping blk.0.attn_v by 1,000 ns;
                        a k_fill kernel outside every range; blk.1.rope ranges with no kernels.
  engine_b.trace.json   "candidate": 3 passes; k_gemm_q4k 2,000 -> 1,500 ns; k_gemm_fused
                        replaced by k_gemm_fused_v2 (4,000 -> 3,000 ns); no k_fill.
  no_nvtx.trace.json    a program without NVTX (like llama.cpp): 3 kernels, no ranges.

Per pass (ns):          A                      B
  blk.0.attn_v          k_gemm_q4k 2000        1500      payload 1e9 FLOP
  blk.0.attn            k_attn 3000            3000
  blk.0.ffn_gate+ffn_up k_gemm_fused 4000      k_gemm_fused_v2 3000   payload 4e9
  blk.1.attn_v          k_gemm_q4k 2000        1500      payload 1e9
  blk.1.rope            (no kernels)
  output                k_gemm_q6k 1000        1000      payload 2e9

Run from this directory: python3 make_synthetic_traces.py
"""
import json

THREAD = 4242
DEVICE = {"id": 0, "name": "NVIDIA H200 (synthetic)", "compute_capability": "9.0",
          "multiprocessors": 132, "global_memory_bytes": 150754820096, "core_clock_khz": 1980000}
MANGLED = {
    "k_gemm_q4k(float const*, float*, int)": "_Z10k_gemm_q4kPKfPfi",
    "k_gemm_q6k(float const*, float*, int)": "_Z10k_gemm_q6kPKfPfi",
    "k_attn(float*, int)": "_Z6k_attnPfi",
    "k_gemm_fused(float const*, float*, int)": "_Z12k_gemm_fusedPKfPfi",
    "k_gemm_fused_v2(float const*, float*, int)": "_Z15k_gemm_fused_v2PKfPfi",
    "k_fill(float*)": "_Z6k_fillPf",
    "elementwise_kernel(float*)": "_Z18elementwise_kernelPf",
    "gemm_kernel(float const*, float*)": "_Z11gemm_kernelPKfPf",
}


class Builder:
    def __init__(self):
        self.ranges, self.kernels, self.next_id, self.corr = [], [], 1, 100
        self.occurrence = {}

    def range(self, name, parent, start, end, flops=None):
        rid = self.next_id
        self.next_id += 1
        occ = self.occurrence.get(name, 0)
        self.occurrence[name] = occ + 1
        self.ranges.append({"id": rid, "domain": "default", "name": name, "kind": "push_pop",
                            "thread": THREAD, "parent": parent, "start_ns": start, "end_ns": end,
                            "payload": None if flops is None else {"type": "uint64", "value": flops},
                            "occurrence": occ})
        return rid

    def kernel(self, name, start, end, range_id, stream=7):
        self.corr += 1
        self.kernels.append({"name": name, "mangled": MANGLED[name], "correlation_id": self.corr,
                             "device": 0, "context": 1, "stream": stream, "grid": [128, 1, 1],
                             "block": [256, 1, 1], "registers": 64, "static_smem": 0,
                             "dynamic_smem": 16384, "local_mem_per_thread": 0,
                             "start_ns": start, "end_ns": end,
                             "thread": THREAD if range_id is not None else None, "range": range_id})


def prefill_pass(b, t0, q4k_ns, fused_name, fused_ns, overlap_attn):
    """One pass starting at t0; returns nothing. Layout mirrors the table in the docstring."""
    p = b.range("prefill", None, t0, t0 + 90000)
    t = t0 + 9000
    r = b.range("blk.0.attn_v", p, t - 500, t + q4k_ns + 100, flops=1_000_000_000)
    b.kernel("k_gemm_q4k(float const*, float*, int)", t, t + q4k_ns, r)
    attn_start = t + q4k_ns - 1000 if overlap_attn else t + q4k_ns
    r = b.range("blk.0.attn", p, attn_start - 100, attn_start + 3100)
    b.kernel("k_attn(float*, int)", attn_start, attn_start + 3000, r, stream=8 if overlap_attn else 7)
    t = attn_start + 3000 + (1000 if overlap_attn else 0)
    r = b.range("blk.0.ffn_gate+ffn_up", p, t - 100, t + fused_ns + 100, flops=4_000_000_000)
    b.kernel(fused_name, t, t + fused_ns, r)
    t += fused_ns
    r = b.range("blk.1.attn_v", p, t - 100, t + q4k_ns + 100, flops=1_000_000_000)
    b.kernel("k_gemm_q4k(float const*, float*, int)", t, t + q4k_ns, r)
    t += q4k_ns
    b.range("blk.1.rope", p, t, t + 50)
    r = b.range("output", p, t + 60, t + 1200, flops=2_000_000_000)
    b.kernel("k_gemm_q6k(float const*, float*, int)", t, t + 1000, r)


def trace(b, command, memcpy=None, memset=None):
    b.kernels.sort(key=lambda k: k["start_ns"])
    return {"schema": "kerneltrace/1", "complete": True,
            "tool": {"name": "kerneltrace", "version": "synthetic"},
            "process": {"pid": 1234, "hostname": "synthetic", "command": command},
            "options": {"kinds": ["kernel", "memcpy", "memset", "nvtx"], "range_filter": None,
                        "buffer_mb": 8, "flush_period_ms": 0, "output": "synthetic.json",
                        "keep_journal": False},
            "devices": [DEVICE],
            "stats": {"kernels_recorded": len(b.kernels), "kernels_without_launch": 0,
                      "kernels_filtered_out": 0, "ranges_recorded": len(b.ranges),
                      "ranges_filtered_out": 0, "unmatched_range_ends": 0,
                      "dropped_activity_records": 0},
            "notes": [], "ranges": b.ranges, "kernels": b.kernels,
            "memcpy": memcpy or {}, "memset": memset or {"count": 0, "bytes": 0, "total_ns": 0}}


def main():
    a = Builder()
    a.kernel("k_fill(float*)", 500, 800, None)
    prefill_pass(a, 1000, 2000, "k_gemm_fused(float const*, float*, int)", 4000, overlap_attn=False)
    prefill_pass(a, 201000, 2000, "k_gemm_fused(float const*, float*, int)", 4000, overlap_attn=True)
    write("engine_a.trace.json", trace(a, ["prefill", "bench", "--model", "toy.gguf"],
                                       memcpy={"HtoD": {"count": 2, "bytes": 8192, "total_ns": 900}},
                                       memset={"count": 1, "bytes": 4096, "total_ns": 120}))

    b = Builder()
    for i in range(3):
        prefill_pass(b, 1000 + i * 200000, 1500, "k_gemm_fused_v2(float const*, float*, int)", 3000,
                     overlap_attn=False)
    write("engine_b.trace.json", trace(b, ["prefill", "bench", "--model", "toy.gguf"]))

    c = Builder()
    c.kernel("gemm_kernel(float const*, float*)", 1000, 6000, None)
    c.kernel("elementwise_kernel(float*)", 6000, 6500, None)
    c.kernel("gemm_kernel(float const*, float*)", 7000, 12000, None)
    write("no_nvtx.trace.json", trace(c, ["llama-bench", "-p", "512"]))


def write(name, value):
    with open(name, "w") as f:
        json.dump(value, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
