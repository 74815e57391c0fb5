#!/usr/bin/env python3
"""SASS hash per kernel of a CUDA binary, for the timing gate's "unchanged code" (gates/timing/kernel_code.h).

  kernel_sass.py --binary BUILD/engine/cli/prefill [--out BUILD/engine/cli/kernel-sass.json]

Runs `cuobjdump --dump-sass` on the binary (or an object / static library), splits the listing at
each "Function : <mangled name>" and hashes each function's instructions (sha256 of its listing
lines with whitespace runs collapsed). Offsets inside a function are function-relative, so a
kernel whose code did not change hashes the same in two builds even when others moved.

cuobjdump is looked for on PATH, in $CUDA_HOME/bin and /usr/local/cuda/bin, and in the PyPI wheels
nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm (cuobjdump needs nvdisasm beside it or on PATH).
Where none is found the file says {"available": false, "reason": ...}: the gate then calls
nothing "unchanged code". Writes schema kernel-sass/1 (default: kernel-sass.json beside the binary).
"""
import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig

SCHEMA = "kernel-sass/1"


def wheel_bin_dirs():
    """bin/ folders of NVIDIA's PyPI CUDA wheels in every site-packages this Python sees."""
    roots = set(sys.path) | {sysconfig.get_paths().get("purelib", ""), sysconfig.get_paths().get("platlib", "")}
    dirs = []
    for root in roots:
        if root and os.path.isdir(os.path.join(root, "nvidia")):
            dirs += glob.glob(os.path.join(root, "nvidia", "*", "bin")) + glob.glob(os.path.join(root, "nvidia", "*", "*", "bin"))
    return dirs


def find_tool(name):
    hit = shutil.which(name)
    if hit:
        return hit
    candidates = [os.path.join(os.environ.get("CUDA_HOME", ""), "bin"), "/usr/local/cuda/bin"] + wheel_bin_dirs()
    for d in candidates:
        p = os.path.join(d, name)
        if d and os.access(p, os.X_OK):
            return p
    return None


FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)\s*$")


def hash_functions(listing):
    """{mangled name: sha256} from a `cuobjdump --dump-sass` listing."""
    out, name, lines = {}, None, []

    def close():
        if name is not None:
            h = hashlib.sha256("\n".join(lines).encode()).hexdigest()
            # The same kernel in two fatbin entries (two archs) gets one hash of both.
            out[name] = h if name not in out else hashlib.sha256((out[name] + h).encode()).hexdigest()

    for raw in listing.splitlines():
        m = FUNCTION.match(raw)
        if m:
            close()
            name, lines = m.group(1), []
            continue
        if name is None:
            continue
        line = " ".join(raw.split())
        if line.startswith(".") or line.startswith("Fatbin") or line.startswith("====") or line.startswith("code for") or \
                line.startswith("arch =") or line.startswith("code version") or line.startswith("host =") or \
                line.startswith("compile_size") or line.startswith("identifier") or line.startswith("ptxasOptions") or \
                line == "compressed":
            continue  # section headers between functions, not instructions
        if line:
            lines.append(line)
    close()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--out")
    a = ap.parse_args()
    out = a.out or os.path.join(os.path.dirname(os.path.abspath(a.binary)), "kernel-sass.json")
    result = {"schema": SCHEMA, "binary": os.path.abspath(a.binary)}
    cuobjdump = find_tool("cuobjdump")
    nvdisasm = find_tool("nvdisasm")
    if not cuobjdump:
        result.update(available=False, reason="no cuobjdump (CUDA toolkit, or pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
    elif not nvdisasm:
        result.update(available=False, reason="cuobjdump found at %s but no nvdisasm for --dump-sass" % cuobjdump)
    else:
        env = dict(os.environ, PATH=os.path.dirname(nvdisasm) + os.pathsep + os.environ.get("PATH", ""))
        p = subprocess.run([cuobjdump, "--dump-sass", a.binary], capture_output=True, text=True, env=env)
        kernels = hash_functions(p.stdout) if p.returncode == 0 else {}
        version = subprocess.run([cuobjdump, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
        result["tool"] = "%s (%s)" % (cuobjdump, version[-1] if version else "?")
        if p.returncode != 0:
            result.update(available=False, reason="cuobjdump --dump-sass exited %d: %s" % (p.returncode, p.stderr.strip()[-300:]))
        elif not kernels:
            result.update(available=False, reason="cuobjdump --dump-sass listed no function (a binary without device code?)")
        else:
            result.update(available=True, kernels=kernels)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, out)
    print("%s: %s" % (out, "%d kernels" % len(result["kernels"]) if result.get("available") else "unavailable: " + result["reason"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
