#!/usr/bin/env python3
"""What ci/landing-step.sh needs to know about a landing report (REPORT/landing.json, schema
landing/1), without a landing binary:

  report_info.py resolve DIR      the report folder DIR names: DIR itself, or a reports folder's
                                  newest report (highest sequence in DIR/index.json)
  report_info.py exit-code REPORT the verdict as the exit-code table has it (0 PASS, 1 FAIL, 2 INCOMPLETE)
  report_info.py annotate REPORT  GitHub workflow commands on stdout: ::error per FAIL gate,
                                  ::warning per INCONCLUSIVE one (and per required gate SKIPPED),
                                  ::notice with the verdict; and verdict=… / report=… appended to
                                  $GITHUB_OUTPUT when it is set (report relative to the current
                                  folder, the repository, when it is inside it)
Exit 5 with a message naming the file and field on a report it cannot read."""
import json
import os
import sys


def fail(msg):
    sys.stderr.write("report_info: %s\n" % msg)
    sys.exit(5)


def load(report):
    path = os.path.join(report, "landing.json")
    try:
        with open(path) as f:
            rec = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (path, e))
    if not isinstance(rec, dict) or rec.get("verdict") not in ("PASS", "FAIL", "INCOMPLETE"):
        fail("%s: verdict: expected PASS, FAIL or INCOMPLETE" % path)
    if not isinstance(rec.get("gates", []), list):
        fail("%s: gates: expected a list" % path)
    return rec


def resolve(folder):
    if os.path.isfile(os.path.join(folder, "landing.json")):
        return folder
    index = os.path.join(folder, "index.json")
    try:
        with open(index) as f:
            reports = json.load(f)["reports"]
        newest = max(reports, key=lambda r: r["seq"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail("%s: no landing.json, and %s does not list reports (%s)" % (folder, index, e))
    return os.path.join(folder, newest["id"])


# Workflow-command escaping (GitHub's toolkit: data escapes %, CR, LF; properties also : and ,).
def escape_data(s):
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s):
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def relative(path):
    here = os.getcwd()
    full = os.path.abspath(path)
    return os.path.relpath(full, here) if full.startswith(here + os.sep) else full


def annotate(report):
    rec = load(report)
    title_of = lambda g: "landing %s %s" % (g.get("gate", "?"), g.get("status", "?"))
    for g in rec.get("gates", []):
        status, reason = g.get("status"), g.get("reason", "")
        kind = None
        if status == "FAIL":
            kind = "error"
        elif status == "INCONCLUSIVE" or (status == "SKIPPED" and g.get("required")):
            kind = "warning"
        if kind:
            print("::%s title=%s::%s" % (kind, escape_property(title_of(g)), escape_data(reason)))
    print("::notice title=%s::%s" % (escape_property("landing verdict " + rec["verdict"]),
                                      escape_data(rec.get("verdict_reason", ""))))
    out = os.environ.get("GITHUB_OUTPUT")
    if out:
        with open(out, "a") as f:
            f.write("verdict=%s\nreport=%s\n" % (rec["verdict"], relative(report)))


def main(argv):
    if len(argv) != 3 or argv[1] not in ("resolve", "exit-code", "annotate"):
        sys.stderr.write(__doc__)
        sys.exit(4)
    cmd, arg = argv[1], argv[2]
    if cmd == "resolve":
        print(resolve(arg))
    elif cmd == "exit-code":
        print({"PASS": 0, "FAIL": 1}.get(load(arg)["verdict"], 2))
    else:
        annotate(arg)


if __name__ == "__main__":
    main(sys.argv)
