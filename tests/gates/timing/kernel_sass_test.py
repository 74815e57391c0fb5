#!/usr/bin/env python3
"""scripts/kernel_sass.py: per-kernel hashes from a cuobjdump listing (a recorded excerpt, no CUDA
tools needed) and the "unavailable" file where no cuobjdump exists.
  kernel_sass_test.py SCRIPT"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

spec = importlib.util.spec_from_file_location("kernel_sass", sys.argv[1])
ks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ks)

HEAD = """
Fatbin elf code:
================
arch = sm_90a
code version = [1,8]
identifier = ../kernels/rope.cu

	code for sm_90a
"""
A = """		Function : _ZN3pfx7kernels10k_rope_f32EPf
	.headerflags	@"EF_CUDA_ACCELERATORS EF_CUDA_SM90"
        /*0000*/                   LDC R1, c[0x0][0x28] ;   /* 0x00000a00ff017b82 */
        /*0010*/                   S2R R0, SR_TID.X ;        /* 0x0000000000007919 */
        /*0020*/                   EXIT ;                    /* 0x000000000000794d */
"""
B = """		Function : _ZN3pfx7kernels12k_rope_fusedEPf
	.headerflags	@"EF_CUDA_ACCELERATORS EF_CUDA_SM90"
        /*0000*/                   LDC R1, c[0x0][0x28] ;   /* 0x00000a00ff017b82 */
        /*0010*/                   EXIT ;                    /* 0x000000000000794d */
"""

one = ks.hash_functions(HEAD + A + B)
two = ks.hash_functions(HEAD + B + A)                 # another build: the kernels in another order
changed = ks.hash_functions(HEAD + A.replace("S2R R0", "S2R R2") + B)
assert sorted(one) == ["_ZN3pfx7kernels10k_rope_f32EPf", "_ZN3pfx7kernels12k_rope_fusedEPf"], one
assert one == two, "a kernel's hash depends only on its own code"
assert changed["_ZN3pfx7kernels10k_rope_f32EPf"] != one["_ZN3pfx7kernels10k_rope_f32EPf"], "an instruction change shows"
assert changed["_ZN3pfx7kernels12k_rope_fusedEPf"] == one["_ZN3pfx7kernels12k_rope_fusedEPf"], "the other kernel is unchanged"

# No cuobjdump reachable: the file says so, and lists no kernel.
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "kernel-sass.json")
    env = {"PATH": d, "CUDA_HOME": d}
    # A Python that sees no NVIDIA wheels: -S skips site-packages.
    subprocess.run([sys.executable, "-S", sys.argv[1], "--binary", sys.executable, "--out", out], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    j = json.load(open(out))
    assert j["schema"] == "kernel-sass/1" and j["available"] is False and "cuobjdump" in j["reason"], j
print("kernel_sass: ok")
