#!/usr/bin/env python3
"""Renders a landing.md / summary.md with a CommonMark library (markdown-it-py, Debian's
python3-markdown-it; tables enabled as in GFM) and checks the structure a CI step summary needs:
the "Before merge" task list comes first, §4 Verification is a real list with one item per gate,
§5 Results is a table with its four columns, each gate's details sit in a <details> block whose
Markdown tables still parse as tables, no absolute path of the machine that ran it, and (with
--links DIR) every relative link resolves inside DIR.

usage: markdown_gfm_check.py FILE.md --gates N [--forbid PATH]... [--links DIR] [--html OUT]
exit 0 when every check holds; 1 with one line per broken check; 2 when markdown-it is missing."""
import argparse
import os
import re
import sys

try:
    from markdown_it import MarkdownIt
except ImportError:
    print("markdown_gfm_check: markdown-it-py not importable: install python3-markdown-it (scripts/bootstrap.sh)",
          file=sys.stderr)
    sys.exit(2)


def sections(tokens):
    """{h2 text: [tokens up to the next h2]} in document order."""
    out, current = {}, None
    for i, t in enumerate(tokens):
        if t.type == "heading_open" and t.tag == "h2":
            current = tokens[i + 1].content
            out[current] = []
        elif current is not None and not (t.type == "heading_close" and t.tag == "h2"):
            out[current].append(t)
    return out


def top_items(toks):
    """Inline text of each top-level item of the first bullet list in toks."""
    items, depth, grab = [], 0, False
    for t in toks:
        if t.type == "bullet_list_open":
            depth += 1
        elif t.type == "bullet_list_close":
            depth -= 1
            if depth == 0:
                break
        elif t.type == "list_item_open" and depth == 1:
            grab = True
        elif t.type == "inline" and grab:
            items.append(t.content)
            grab = False
    return items


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--gates", type=int, required=True, help="gate results in the report")
    ap.add_argument("--forbid", action="append", default=[], help="text that must not appear (absolute folders)")
    ap.add_argument("--links", help="folder relative links must resolve in")
    ap.add_argument("--html", help="write the rendered HTML here")
    a = ap.parse_args()
    text = open(a.file, encoding="utf-8").read()
    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(text)
    errors = []
    secs = sections(tokens)
    names = list(secs)
    if not names or names[0] != "Before merge":
        errors.append(f"the first section is {names[:1]}, expected 'Before merge'")
    checklist = top_items(secs.get("Before merge", []))
    if len(checklist) < a.gates:
        errors.append(f"Before merge: {len(checklist)} list items, expected at least one per gate ({a.gates})")
    for item in checklist:
        if not re.match(r"\[[ x]\] ", item):
            errors.append(f"Before merge: item is not a task ('[ ] ' / '[x] '): {item[:60]!r}")
    verification = secs.get("4. Verification", [])
    items = top_items(verification)
    if len(items) < a.gates:
        errors.append(f"4. Verification: {len(items)} list items, expected one per gate ({a.gates})")
    if any(t.type == "inline" and "•" in t.content for t in verification):
        errors.append("4. Verification: a '•' line (renders as one run-on paragraph)")
    results = secs.get("5. Results", [])
    heads = [results[i + 1].content for i, t in enumerate(results) if t.type == "th_open"]
    if any(t.type == "table_open" for t in results):
        if heads[:4] != ["metric", "before", "after", "Δ"]:
            errors.append(f"5. Results: table header {heads[:4]}, expected metric/before/after/Δ")
        if not any(t.type == "td_open" for t in results):
            errors.append("5. Results: the table has no rows")
    elif not any(t.type == "inline" and "No before → after figures" in t.content for t in results):
        errors.append("5. Results: neither a table nor the 'no figures' line")
    details = secs.get("Gate details", [])
    opens = [t for t in details if t.type == "html_block" and t.content.lstrip().startswith("<details")]
    closes = [t for t in details if t.type == "html_block" and "</details>" in t.content]
    if len(opens) != a.gates or len(closes) != a.gates:
        errors.append(f"Gate details: {len(opens)} <details> / {len(closes)} </details> blocks, expected {a.gates} each")
    raw_pipes = [t.content for t in details if t.type == "inline" and t.content.startswith("|")]
    if raw_pipes:
        errors.append(f"Gate details: a table that did not parse (a paragraph of '|' lines): {raw_pipes[0][:60]!r}")
    for f in a.forbid:
        if f and f in text:
            errors.append(f"absolute folder {f!r} appears (line {text[:text.index(f)].count(chr(10)) + 1})")
    for t in tokens:
        for c in t.children or []:
            if c.type == "code_inline" and re.search(r"(^|\s)/[A-Za-z]", c.content):
                errors.append(f"a command with an absolute path: {c.content[:80]!r}")
            if c.type == "link_open":
                href = c.attrGet("href") or ""
                if re.match(r"[a-z]+:", href) or href.startswith("/"):
                    errors.append(f"a link out of the report: {href!r}")
                elif a.links and not href.startswith("#") and not os.path.exists(os.path.join(a.links, href.split("#")[0])):
                    errors.append(f"a link that does not resolve in {a.links}: {href!r}")
    if a.html:
        with open(a.html, "w", encoding="utf-8") as out:
            out.write("<!doctype html>\n<meta charset=\"utf-8\">\n<title>landing step summary</title>\n")
            out.write(md.render(text))
    for e in errors:
        print(f"{a.file}: {e}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
