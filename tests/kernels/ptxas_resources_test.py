#!/usr/bin/env python3
"""Tests of scripts/ptxas_resources.py on a canned ptxas report (no compiler, no GPU).
Usage: ptxas_resources_test.py PATH/TO/ptxas_resources.py"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = None

REPORT = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_ZN3pfx7kernels13k_argmax_rowsEPKfiPi' for 'sm_90a'
ptxas info    : Function properties for _ZN3pfx7kernels13k_argmax_rowsEPKfiPi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 25 registers, used 1 barriers, 132 bytes smem, 372 bytes cmem[0]
ptxas info    : Compiling entry function '_ZN3pfx7kernels20k_attn_flash_prefillILi128EEEvPKtS3_S3_Ptiiiiif' for 'sm_90a'
ptxas info    : Function properties for _ZN3pfx7kernels20k_attn_flash_prefillILi128EEEvPKtS3_S3_Ptiiiiif
    24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 380 bytes cmem[0]
ptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the function '_ZN3pfx7kernels20k_attn_flash_prefillILi128EEEvPKtS3_S3_Ptiiiiif'
"""


def run(*args, **kw):
    return subprocess.run([sys.executable, SCRIPT] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, **kw)


class Assemble(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        os.makedirs(os.path.join(d, "src", "kernels"))
        os.makedirs(os.path.join(d, "ptxas"))
        self.src = os.path.join(d, "src", "kernels", "mixed.cu")
        open(self.src, "w").close()
        with open(os.path.join(d, "ptxas", "mixed.cu.ptxas.txt"), "w") as f:
            f.write(REPORT)
        self.launch = os.path.join(d, "launch.json")

    def tearDown(self):
        self.tmp.cleanup()

    def assemble(self, launch):
        with open(self.launch, "w") as f:
            json.dump(launch, f)
        d = self.tmp.name
        return run("assemble", "--ptxas-dir", os.path.join(d, "ptxas"), "--source-root", os.path.join(d, "src"),
                   "--launch-info", self.launch, "--json", os.path.join(d, "out", "r.json"),
                   "--text", os.path.join(d, "out", "r.txt"), self.src)

    def test_joins_ptxas_figures_with_launch_shapes(self):
        p = self.assemble([{"name": "k_argmax_rows", "threads_per_block": 512, "dynamic_smem_bytes": 0,
                            "source": "mixed.cu"},
                           {"name": "k_attn_flash_prefill<128>", "threads_per_block": 128,
                            "dynamic_smem_bytes": 81920, "source": "mixed.cu"}])
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.load(open(os.path.join(self.tmp.name, "out", "r.json")))
        self.assertEqual(doc["schema"], "kernel-resources/1")
        self.assertEqual(doc["arch"], "sm_90a")
        by = {k["name"]: k for k in doc["kernels"]}
        self.assertEqual(set(by), {"k_argmax_rows", "k_attn_flash_prefill<128>"})
        a = by["k_argmax_rows"]
        self.assertEqual((a["registers"], a["static_smem_bytes"], a["threads_per_block"], a["stack_bytes"]),
                         (25, 132, 512, 0))
        self.assertEqual(a["source"], "kernels/mixed.cu")
        self.assertEqual(a["mangled"], "_ZN3pfx7kernels13k_argmax_rowsEPKfiPi")
        f = by["k_attn_flash_prefill<128>"]
        self.assertEqual((f["registers"], f["spill_store_bytes"], f["spill_load_bytes"], f["stack_bytes"],
                          f["static_smem_bytes"], f["dynamic_smem_bytes"]), (255, 8, 12, 24, 0, 81920))
        # ptxas's performance notes, by function name: [] where it has none.
        self.assertEqual(a["performance_notes"], [])
        self.assertEqual(f["performance_notes"], ["C7512: wgmma.mma_async instructions are serialized due to "
                                                  "insufficient register resources"])
        text = open(os.path.join(self.tmp.name, "out", "r.txt")).read()
        self.assertIn("# ---- kernels/mixed.cu ----", text)
        self.assertIn("Used 255 registers", text)

    def test_unregistered_kernel_is_null_with_warning(self):
        p = self.assemble([{"name": "k_argmax_rows", "threads_per_block": 512, "dynamic_smem_bytes": 0,
                            "source": "mixed.cu"}])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("k_attn_flash_prefill<128>", p.stderr)
        doc = json.load(open(os.path.join(self.tmp.name, "out", "r.json")))
        f = [k for k in doc["kernels"] if k["name"] == "k_attn_flash_prefill<128>"][0]
        self.assertIsNone(f["threads_per_block"])

    def test_registered_name_without_kernel_fails(self):
        p = self.assemble([{"name": "k_argmax_rowz", "threads_per_block": 512, "dynamic_smem_bytes": 0,
                            "source": "mixed.cu"}])
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("k_argmax_rowz", p.stderr)

    def test_missing_report_fails(self):
        os.remove(os.path.join(self.tmp.name, "ptxas", "mixed.cu.ptxas.txt"))
        p = self.assemble([])
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("no ptxas report", p.stderr)


class ShortName(unittest.TestCase):
    def test_strips_scopes_everywhere(self):
        sys.path.insert(0, os.path.dirname(SCRIPT))
        import ptxas_resources as pr
        self.assertEqual(pr.short_name("pfx::kernels::k_rmsnorm_warp(float const*, int)"), "k_rmsnorm_warp")
        self.assertEqual(pr.short_name("void pfx::kernels::k_attn_flash_prefill<128>(unsigned short const*)"),
                         "k_attn_flash_prefill<128>")
        self.assertEqual(pr.short_name("void pfx::kernels::dev::(anonymous namespace)::k_gemv_fast<"
                                       "pfx::kernels::dev::WeightQ8_0, 8>(pfx::kernels::dev::"
                                       "(anonymous namespace)::GemvParams)"), "k_gemv_fast<WeightQ8_0, 8>")


class Capture(unittest.TestCase):
    def test_keeps_stderr_and_exit_code(self):
        with tempfile.TemporaryDirectory() as d:
            fake = "echo 'ptxas info    : Used 7 registers' >&2; echo out; exit $0"
            p = run("capture", d, "sh", "-c", fake, "0", "x.cu")
            self.assertEqual(p.returncode, 0)
            self.assertIn("out", p.stdout)
            self.assertIn("Used 7 registers", p.stderr)
            self.assertIn("Used 7 registers", open(os.path.join(d, "x.cu.ptxas.txt")).read())
            p = run("capture", d, "sh", "-c", fake, "3", "x.cu")
            self.assertEqual(p.returncode, 3)
            self.assertFalse(os.path.exists(os.path.join(d, "x.cu.ptxas.txt")), "stale report after a failed compile")


if __name__ == "__main__":
    SCRIPT = sys.argv.pop(1)
    unittest.main()
