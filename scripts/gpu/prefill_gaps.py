#!/usr/bin/env python3
"""Idle GPU time inside each prefill pass of a kerneltrace JSON (gates/trace): the passes are the
bursts of kernels separated by more than --split-us of idle time; per burst its span (first kernel
start to last kernel end), the union of kernel intervals (busy), the idle rest, and the idle gaps
between consecutive busy intervals by size. What a launch-overlap change (PDL) can win is the idle.
Read it on builds without programmatic launches in the pass: a programmatic dependent's interval
starts when its blocks do and includes their wait, so its idle time counts as busy here.
  prefill_gaps.py TRACE.json [TRACE.json ...] [--split-us 300]"""
import argparse
import json
import statistics


def bursts(kernels, split_ns):
    out, cur, end = [], [], None
    for k in kernels:
        if cur and k["start_ns"] - end > split_ns:
            out.append(cur)
            cur, end = [], None
        cur.append(k)
        end = k["end_ns"] if end is None else max(end, k["end_ns"])
    if cur:
        out.append(cur)
    return out


def busy_intervals(burst):
    merged = []
    for k in sorted(burst, key=lambda k: k["start_ns"]):
        if merged and k["start_ns"] <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], k["end_ns"])
        else:
            merged.append([k["start_ns"], k["end_ns"]])
    return merged


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--split-us", type=float, default=300.0)
    ap.add_argument("--min-kernels", type=int, default=50, help="bursts with fewer kernels are not passes")
    a = ap.parse_args()
    for path in a.traces:
        kernels = sorted(json.load(open(path))["kernels"], key=lambda k: k["start_ns"])
        rows = []
        for b in bursts(kernels, a.split_us * 1000):
            if len(b) < a.min_kernels:
                continue
            iv = busy_intervals(b)
            span = iv[-1][1] - iv[0][0]
            busy = sum(e - s for s, e in iv)
            gaps = [iv[i + 1][0] - iv[i][1] for i in range(len(iv) - 1)]
            rows.append((len(b), span, busy, gaps))
        print(f"{path}: {len(rows)} bursts (passes closer together than --split-us count as one)")
        for n, span, busy, gaps in rows:
            big = [g for g in gaps if g >= 5000]
            print(f"  {n} kernels: span {span / 1e3:9.1f} us, busy {busy / 1e3:9.1f} us, idle {(span - busy) / 1e3:7.1f} us"
                  f" ({100 * (span - busy) / span:4.1f}%) in {len(gaps)} gaps: median {statistics.median(gaps) / 1e3 if gaps else 0:.2f} us,"
                  f" >= 5 us: {len(big)} ({sum(big) / 1e3:.1f} us)")


if __name__ == "__main__":
    main()
