#!/usr/bin/env python3
"""Kernel resource usage from the compiler, for the ptxas gate (DESIGN.md seam 5).

Two sub-commands, both run by kernels/CMakeLists.txt:

  capture DIR COMPILER ARGS...
      CUDA compiler launcher: runs the compile command unchanged, passes its output through,
      and keeps a copy of its stderr (the `-Xptxas --verbose` report) in DIR/<source>.ptxas.txt.
      So the figures come from the very compile that produced the linked objects.

  assemble --ptxas-dir DIR --source-root ROOT --launch-info LAUNCH.json --json OUT.json
           --text OUT.txt [--arch sm_90a] SOURCE.cu...
      Parses the captured reports of the given sources, joins each kernel entry with its launch
      shape (threads per block, dynamic shared memory) registered next to the kernel
      (kernels/launch_info.h), and writes kernel-resources.json (schema kernel-resources/1,
      docs/prefill-cli.md) and kernel-resources.ptxas.txt (the raw reports, one section per source).

A kernel without a registered launch shape gets null threads_per_block / dynamic_smem_bytes and a
warning; a registered name that matches no compiled kernel (a typo) is an error.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SCHEMA = "kernel-resources/1"

RE_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
RE_PROPS = re.compile(r"Function properties for (\S+)")
RE_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
RE_USED = re.compile(r"Used (\d+) registers")
RE_SMEM = re.compile(r"(\d+) bytes smem")
# "(C7512) Potential Performance Loss: wgmma.mma_async instructions are serialized due to ... for
# the function '<mangled>'": ptxas's notes on code it could not schedule as written (the wgmma
# pipeline serialized, C7512 / C7513). They come after the function's figures, by name.
RE_PERF_NOTE = re.compile(r"\((C\d{4})\) Potential Performance Loss: (.*?)\s*(?:in|for) the function '([^']+)'")


def capture(argv):
    if len(argv) < 2:
        print("ptxas_resources.py capture: usage: capture DIR COMPILER ARGS...", file=sys.stderr)
        return 2
    out_dir, cmd = argv[0], argv[1:]
    sources = [a for a in cmd if a.endswith(".cu")]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sys.stdout.buffer.write(proc.stdout)
    sys.stderr.buffer.write(proc.stderr)
    if len(sources) == 1:
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, os.path.basename(sources[0]) + ".ptxas.txt")
        if proc.returncode == 0:
            fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".capture-")
            with os.fdopen(fd, "wb") as f:
                f.write(proc.stderr)
            os.replace(tmp, path)
        elif os.path.exists(path):
            os.remove(path)  # a failed compile must not leave an older report looking current
    return proc.returncode


def parse_report(text):
    """Entry functions of one ptxas -v report: mangled name -> figures."""
    kernels = {}
    props = {}  # function name -> (stack, spill stores, spill loads); device functions appear too
    current_entry = None
    props_for = None
    notes = {}  # function name -> ["C7512: <what ptxas says>", ...]
    for line in text.splitlines():
        m = RE_PERF_NOTE.search(line)
        if m:
            notes.setdefault(m.group(3), []).append("%s: %s" % (m.group(1), m.group(2)))
            continue
        m = RE_ENTRY.search(line)
        if m:
            current_entry = m.group(1)
            kernels[current_entry] = {"arch": m.group(2)}
            props_for = None
            continue
        m = RE_PROPS.search(line)
        if m:
            props_for = m.group(1)
            continue
        m = RE_STACK.search(line)
        if m and props_for is not None:
            props[props_for] = tuple(int(x) for x in m.groups())
            props_for = None
            continue
        m = RE_USED.search(line)
        if m and current_entry is not None:
            k = kernels[current_entry]
            k["registers"] = int(m.group(1))
            s = RE_SMEM.search(line)
            k["static_smem_bytes"] = int(s.group(1)) if s else 0
            current_entry = None
    for name, k in kernels.items():
        stack, spill_st, spill_ld = props.get(name, (0, 0, 0))
        k["stack_bytes"], k["spill_store_bytes"], k["spill_load_bytes"] = stack, spill_st, spill_ld
        k["performance_notes"] = sorted(set(notes.get(name, [])))
    return kernels


def demangle(names):
    tool = shutil.which("c++filt") or shutil.which("cu++filt")
    if not names:
        return {}
    if tool is None:
        print("ptxas_resources.py: warning: no c++filt; kernel names stay mangled", file=sys.stderr)
        return {n: n for n in names}
    out = subprocess.run([tool], input="\n".join(names) + "\n", stdout=subprocess.PIPE, text=True, check=True).stdout
    lines = out.splitlines()
    if len(lines) != len(names):
        raise SystemExit("ptxas_resources.py: c++filt returned %d lines for %d names" % (len(lines), len(names)))
    return dict(zip(names, lines))


RE_SCOPE = re.compile(r"(?:[A-Za-z_]\w*|\(anonymous namespace\))::")


def short_name(demangled):
    """'void pfx::kernels::k_x<pfx::W, 64>(int)' -> 'k_x<W, 64>': drop the parameters, the return
    type and every namespace/class qualifier (inside template arguments too)."""
    demangled = demangled.replace("(anonymous namespace)", "anonymous_namespace")
    depth, cut = 0, len(demangled)
    for i, ch in enumerate(demangled):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0:
            cut = i
            break
    head = demangled[:cut]
    # Last top-level '::' (or space, after a return type) separates the unqualified name.
    depth, start = 0, 0
    i = 0
    while i < len(head):
        ch = head[i]
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif depth == 0 and head.startswith("::", i):
            start = i + 2
            i += 1
        elif depth == 0 and ch == " ":
            start = i + 1
        i += 1
    return RE_SCOPE.sub("", head[start:])


def assemble(args):
    with open(args.launch_info) as f:
        launch = json.load(f)
    by_name = {}
    for item in launch:
        if item["name"] in by_name:
            raise SystemExit("ptxas_resources.py: launch shape of %s registered twice" % item["name"])
        by_name[item["name"]] = item

    sections, entries = [], []
    for src in args.sources:
        rel = os.path.relpath(os.path.abspath(src), os.path.abspath(args.source_root))
        report_path = os.path.join(args.ptxas_dir, os.path.basename(src) + ".ptxas.txt")
        if not os.path.exists(report_path):
            raise SystemExit("ptxas_resources.py: no ptxas report for %s (expected %s; was it compiled "
                             "through the capture launcher?)" % (rel, report_path))
        with open(report_path, errors="replace") as f:
            text = f.read()
        sections.append("# ---- %s ----\n%s" % (rel, text if text.endswith("\n") or not text else text + "\n"))
        for mangled, k in parse_report(text).items():
            if "registers" not in k:
                raise SystemExit("ptxas_resources.py: %s: no 'Used N registers' line for %s" % (rel, mangled))
            if args.arch and k["arch"] != args.arch:
                continue
            entries.append((mangled, rel, k))

    names = demangle(sorted({m for m, _, _ in entries}))
    kernels, seen = [], set()
    for mangled, rel, k in entries:
        name = short_name(names[mangled])
        info = by_name.get(name)
        if info is None and name not in seen:
            print("ptxas_resources.py: warning: %s (%s) has no registered launch shape "
                  "(PFX_KERNEL_LAUNCH_INFO); threads_per_block/dynamic_smem_bytes = null" % (name, rel),
                  file=sys.stderr)
        seen.add(name)
        kernels.append({
            "name": name,
            "mangled": mangled,
            "registers": k["registers"],
            "spill_store_bytes": k["spill_store_bytes"],
            "spill_load_bytes": k["spill_load_bytes"],
            "stack_bytes": k["stack_bytes"],
            "performance_notes": k["performance_notes"],
            "static_smem_bytes": k["static_smem_bytes"],
            "dynamic_smem_bytes": info["dynamic_smem_bytes"] if info else None,
            "threads_per_block": info["threads_per_block"] if info else None,
            "source": rel,
        })
    unmatched = sorted(set(by_name) - seen)
    if unmatched:
        raise SystemExit("ptxas_resources.py: launch shapes registered for kernels ptxas did not compile "
                         "(name typo?): %s" % ", ".join(unmatched))
    if not kernels:
        raise SystemExit("ptxas_resources.py: no kernel entries found in the ptxas reports")
    kernels.sort(key=lambda k: (k["source"], k["name"]))
    doc = {"schema": SCHEMA, "arch": args.arch, "kernels": kernels}
    write_atomic(args.json, json.dumps(doc, indent=1) + "\n")
    write_atomic(args.text, "".join(sections))
    return 0


def write_atomic(path, text):
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".kernel-resources-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)  # mkstemp creates 0600; these are ordinary build outputs
    os.replace(tmp, path)


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "capture":
        return capture(sys.argv[2:])
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("capture", help="compiler launcher (see above)")
    a = sub.add_parser("assemble", help="write kernel-resources.json and .ptxas.txt")
    a.add_argument("--ptxas-dir", required=True)
    a.add_argument("--source-root", required=True)
    a.add_argument("--launch-info", required=True)
    a.add_argument("--json", required=True)
    a.add_argument("--text", required=True)
    a.add_argument("--arch", default="sm_90a")
    a.add_argument("sources", nargs="+")
    args = p.parse_args()
    return assemble(args)


if __name__ == "__main__":
    sys.exit(main())
