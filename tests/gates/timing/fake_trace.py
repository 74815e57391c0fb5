#!/usr/bin/env python3
"""A stand-in for `landing trace -o OUT [options] -- PROGRAM ARGS...` in the timing gate's tests:
writes the recorded trace `trace.json` beside it to OUT, then runs PROGRAM with its stdout passed
through (as the real tracer does) and exits with its status. No CUDA, no CUPTI: the gate's own
logic around the tracer is what these tests exercise."""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    argv = sys.argv[1:]
    if argv[:1] != ["trace"] or "--" not in argv:
        sys.stderr.write("fake_trace: usage: trace -o OUT [options] -- PROGRAM ARGS...\n")
        return 4
    options, program = argv[1:argv.index("--")], argv[argv.index("--") + 1:]
    if "-o" not in options:
        sys.stderr.write("fake_trace: -o OUT is required\n")
        return 4
    shutil.copyfile(os.path.join(HERE, "trace.json"), options[options.index("-o") + 1])
    return subprocess.call(program)


if __name__ == "__main__":
    sys.exit(main())
