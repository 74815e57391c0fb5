#!/usr/bin/env python3
"""`prefill bench` output formats, parsed back by the readers their users have: json/jsonl by
json, csv by the csv module, sql by sqlite3, md as a GitHub table; every format carries
llama-bench's columns (tools/llama-bench/llama-bench.cpp) in its order plus ours, with its types.
`--json` keeps the shape the gates and the side-by-side script read (results[].test, .mean_tps),
checked by running that script's own reader when ../shared/peer/side_by_side.sh is present, with
`-o json` standing in for llama-bench's output. Runs on the CPU reference (--backend cpu).

usage: bench_formats_test.py PREFILL MODEL [LANDING [SIDE_BY_SIDE_SH]]"""
import csv
import io
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import unittest

PREFILL, MODEL = sys.argv[1], sys.argv[2]
LANDING = sys.argv[3] if len(sys.argv) > 3 else ""
SIDE_BY_SIDE = sys.argv[4] if len(sys.argv) > 4 else ""

LLAMA_FIELDS = [
    "build_commit", "build_number", "cpu_info", "gpu_info", "backends", "model_filename", "model_type",
    "model_size", "model_n_params", "n_batch", "n_ubatch", "n_threads", "cpu_mask", "cpu_strict", "poll",
    "type_k", "type_v", "n_gpu_layers", "n_cpu_moe", "split_mode", "main_gpu", "no_kv_offload", "flash_attn",
    "devices", "tensor_split", "tensor_buft_overrides", "load_mode", "embeddings", "no_op_offload", "no_host",
    "fit_target", "fit_min_ctx", "n_prompt", "n_gen", "n_depth", "test_time", "avg_ns", "stddev_ns", "avg_ts",
    "stddev_ts"]
OURS = ["path", "gemm", "schema"]
INTS = {"build_number", "model_size", "model_n_params", "n_batch", "n_ubatch", "n_threads", "poll", "n_gpu_layers",
        "n_cpu_moe", "main_gpu", "flash_attn", "no_op_offload", "fit_target", "fit_min_ctx", "n_prompt", "n_gen",
        "n_depth", "avg_ns", "stddev_ns"}
BOOLS = {"cpu_strict", "no_kv_offload", "embeddings", "no_host"}
FLOATS = {"avg_ts", "stddev_ts"}
TESTS = [(8, 0), (16, 0), (0, 4)]  # -p 8,16 -n 4


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read()


def bench(*fmt, expect=0):
    p = subprocess.run([PREFILL, "bench", "--model", MODEL, "--backend", "cpu", "--n-prompt", "8,16", "--n-gen", "4",
                        "--repetitions", "3", "--warmup", "0", *fmt], capture_output=True, text=True, timeout=300)
    if p.returncode != expect:
        raise AssertionError("prefill bench %s: exit %d (expected %d)\n%s" % (" ".join(fmt), p.returncode, expect, p.stderr))
    return p.stdout


class BenchFormats(unittest.TestCase):
    def check_row(self, row, n_prompt, n_gen):
        self.assertEqual(list(row.keys())[:len(LLAMA_FIELDS)], LLAMA_FIELDS)
        for f in OURS + ["samples_ns", "samples_ts"]:
            self.assertIn(f, row)
        for f in INTS:
            self.assertIsInstance(row[f], int, f)
            self.assertNotIsInstance(row[f], bool, f)
        for f in BOOLS:
            self.assertIsInstance(row[f], bool, f)
        for f in FLOATS:
            self.assertIsInstance(row[f], float, f)
        self.assertEqual((row["n_prompt"], row["n_gen"]), (n_prompt, n_gen))
        self.assertEqual(row["backends"], "CPU")
        self.assertEqual(row["path"], "reference")
        self.assertEqual(row["schema"], "prefill-bench/2")
        self.assertEqual(len(row["samples_ns"]), 3)
        self.assertEqual(len(row["samples_ts"]), 3)
        # t/s = tokens / time per repetition; avg_ts is their mean (llama-bench's definitions).
        for ns, ts in zip(row["samples_ns"], row["samples_ts"]):
            self.assertAlmostEqual(ts, 1e9 * (n_prompt + n_gen) / ns, delta=ts * 1e-9)
        self.assertAlmostEqual(row["avg_ts"], sum(row["samples_ts"]) / 3, delta=row["avg_ts"] * 1e-6)
        self.assertTrue(all(t > 0 for t in row["samples_ts"]))
        self.assertTrue(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", row["test_time"]), row["test_time"])

    def test_json_is_llama_bench_array(self):
        rows = json.loads(bench("-o", "json"))
        self.assertEqual(len(rows), 3)
        for row, (p, g) in zip(rows, TESTS):
            self.check_row(row, p, g)

    def test_jsonl_one_object_per_line(self):
        lines = bench("--output", "jsonl").splitlines()
        self.assertEqual(len(lines), 3)
        for line, (p, g) in zip(lines, TESTS):
            self.check_row(json.loads(line), p, g)

    def test_csv_has_the_columns_and_quoted_values(self):
        text = bench("-o", "csv")
        reader = csv.DictReader(io.StringIO(text))
        self.assertEqual(reader.fieldnames, LLAMA_FIELDS + OURS)
        rows = list(reader)
        self.assertEqual([(int(r["n_prompt"]), int(r["n_gen"])) for r in rows], TESTS)
        self.assertTrue(text.splitlines()[1].startswith('"'), "values are quoted as llama-bench quotes them")
        for r in rows:
            self.assertGreater(float(r["avg_ts"]), 0)

    def test_sql_loads_into_sqlite(self):
        db = sqlite3.connect(":memory:")
        db.executescript(bench("-o", "sql"))
        cols = [c[1] for c in db.execute("PRAGMA table_info(llama_bench)")]
        self.assertEqual(cols, LLAMA_FIELDS + OURS)
        types = {c[1]: c[2] for c in db.execute("PRAGMA table_info(llama_bench)")}
        self.assertEqual(types["avg_ts"], "REAL")
        self.assertEqual(types["n_prompt"], "INTEGER")
        self.assertEqual(types["model_type"], "TEXT")
        rows = db.execute("SELECT n_prompt, n_gen, avg_ts, typeof(avg_ts) FROM llama_bench ORDER BY rowid").fetchall()
        self.assertEqual([(r[0], r[1]) for r in rows], TESTS)
        self.assertTrue(all(r[2] > 0 and r[3] == "real" for r in rows))

    def test_markdown_is_a_table_with_build_footer(self):
        text = bench()
        lines = text.splitlines()
        header = [c.strip() for c in lines[0].strip("|").split("|")]
        self.assertEqual(header[:4], ["model", "size", "params", "backend"])
        self.assertIn("threads", header)  # the CPU backend shows its threads, as llama-bench does
        self.assertEqual(header[-2:], ["test", "t/s"])
        self.assertTrue(re.fullmatch(r"\|( -+[-:] \|)+", lines[1]), lines[1])
        body = [l for l in lines[2:] if l.startswith("|")]
        self.assertEqual([c.strip() for c in body[2].strip("|").split("|")][-2], "tg4")
        self.assertTrue(re.search(r"\d+\.\d\d ± \d+\.\d\d", body[0]))
        self.assertTrue(re.search(r"^build: [0-9a-f]{8}|^build: unknown", lines[-1]), lines[-1])

    def test_prefill_json_keeps_the_gates_shape(self):
        j = json.loads(bench("--json"))
        self.assertEqual([r["test"] for r in j["results"]], ["pp8", "pp16", "tg4"])
        for r in j["results"]:
            for f in ("mean_tps", "stddev_tps", "samples_tps", "samples_ms", "reps", "warmup"):
                self.assertIn(f, r)
            self.assertAlmostEqual(r["mean_tps"], r["avg_ts"])
            self.assertEqual(len(r["samples_ms"]), 3)
        self.assertEqual(j["backend"], "cpu")
        self.assertIn("device", j)

    def test_version_advertises_formats(self):
        p = subprocess.run([PREFILL, "--version", "--json"], capture_output=True, text=True, check=True)
        caps = json.loads(p.stdout)["capabilities"]
        self.assertEqual(caps["bench_formats"], ["md", "json", "jsonl", "csv", "sql"])
        self.assertIn("cpu", caps["bench_backends"])

    def test_usage_errors(self):
        bench("-o", "xml", expect=4)
        bench("-o", "json", "--json", expect=4)
        bench("--repetitions", "0", expect=4)

    @unittest.skipUnless(SIDE_BY_SIDE and os.path.exists(SIDE_BY_SIDE), "../shared/peer/side_by_side.sh not here")
    def test_side_by_side_reads_ours_and_llama_shape(self):
        # The script's own summary program (its heredoc), on our --json and on -o json (the
        # llama-bench shape): it must find every test in both.
        text = read(SIDE_BY_SIDE)
        program = re.search(r"<<'PY'[^\n]*\n(.*?)\nPY\n", text, re.S).group(1)
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, "ours-1.json"), bench("--json"))
            write(os.path.join(d, "llama-1.json"), bench("-o", "json"))
            p = subprocess.run([sys.executable, "-", d, "1"], input=program, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("missing results", p.stdout)
        for t in ("pp8", "pp16", "tg4"):
            self.assertRegex(p.stdout, r"\b%s\b.*x" % t)

    @unittest.skipUnless(LANDING, "no landing binary given")
    def test_landing_compare_reads_every_json_format(self):
        with tempfile.TemporaryDirectory() as d:
            files = {}
            for name, fmt in (("a.json", ["--json"]), ("b.json", ["-o", "json"]), ("c.jsonl", ["-o", "jsonl"])):
                files[name] = os.path.join(d, name)
                write(files[name], bench(*fmt))
            for x, y in (("a.json", "b.json"), ("b.json", "c.jsonl")):
                p = subprocess.run([LANDING, "compare", files[x], files[y], "--json"], capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                rows = json.loads(p.stdout)["rows"]
                self.assertEqual([r["test"] for r in rows], ["pp8", "pp16", "tg4"])
                for r in rows:
                    self.assertTrue(math.isfinite(r["speedup"]) and r["speedup"] > 0)
                    self.assertEqual((r["a_n"], r["b_n"]), (3, 3))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
