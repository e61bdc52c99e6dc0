#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The documentation's own checks (no root, no module):

- every relative link of every Markdown and reStructuredText file of the
  repository names a file that exists, and an anchor that its headings
  make (GitHub's slugs for Markdown, docutils' ids for rST);
- every rST file converts with docutils without a warning or an error
  (Documentation/networking/xdp_flow.rst goes into the kernel's tree;
  tools/xdp-flow/README.rst is the xdp-flow(8) manual page);
- README.md links to every other page in one step, and its own text
  names no commit and no date (those belong in bench/RESULTS.md,
  selftests/README.md and git).

Prints TAP lines; exits 1 if a check failed.
"""

import io
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

failed = 0


def ok(what):
    print(f"ok - docs: {what}")


def not_ok(what, why):
    global failed
    failed += 1
    print(f"not ok - docs: {what}")
    for line in why:
        print(f"#   {line}")


def doc_files():
    """The repository's .md and .rst files, relative to ROOT."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "*.md", "*.rst"],
                             capture_output=True, text=True, check=True)
        files = [f for f in out.stdout.splitlines() if f]
        if files:
            return sorted(files)
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(ROOT):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        for n in names:
            if n.endswith((".md", ".rst")):
                files.append(os.path.relpath(os.path.join(d, n), ROOT))
    return sorted(files)


def md_slug(heading):
    """The anchor GitHub gives a Markdown heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def md_text(path):
    """A Markdown file's lines without code: fenced and indented blocks."""
    lines, fenced = [], False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if fenced or line.startswith("    ") or line.startswith("\t"):
                continue
            lines.append(line.rstrip("\n"))
    return lines


def md_anchors(path):
    seen, out = {}, set()
    for line in md_text(path):
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = md_slug(m.group(1))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def md_links(path):
    links = []
    for line in md_text(path):
        line = re.sub(r"`[^`]*`", "", line)
        links += re.findall(r"\]\(([^)\s]+)\)", line)
    return links


def rst_doctree(path):
    """docutils' tree of @path and what it reported at warning or above."""
    from docutils.core import publish_doctree

    report = io.StringIO()
    with open(path, encoding="utf-8") as f:
        src = f.read()
    tree = publish_doctree(src, source_path=path, settings_overrides={
        "report_level": 2, "halt_level": 5, "warning_stream": report,
        "file_insertion_enabled": False, "raw_enabled": False})
    return tree, report.getvalue().strip()


def rst_anchors(path):
    tree, _ = rst_doctree(path)
    ids = set()
    for node in tree.traverse():
        ids.update(getattr(node, "get", lambda k, d=None: d)("ids", []) or [])
    return ids


def rst_links(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return (re.findall(r"`[^`<]*<([^>`]+)>`__?", text) +
            re.findall(r"^\.\. _[^:]+:\s+(\S+)\s*$", text, re.M))


def anchors(path, cache={}):
    if path not in cache:
        cache[path] = (rst_anchors(path) if path.endswith(".rst")
                       else md_anchors(path))
    return cache[path]


def links_of(rel):
    path = os.path.join(ROOT, rel)
    return rst_links(path) if rel.endswith(".rst") else md_links(path)


def check_links(files):
    bad = []
    for rel in files:
        for link in links_of(rel):
            if re.match(r"[a-z][a-z0-9+.-]*:", link):
                continue            # http:, https:, mailto:
            target, _, frag = link.partition("#")
            if target:
                dest = os.path.normpath(os.path.join(ROOT, os.path.dirname(rel),
                                                     target))
            else:
                dest = os.path.join(ROOT, rel)
            if not os.path.exists(dest):
                bad.append(f"{rel}: {link}: no such file")
                continue
            if frag and os.path.isfile(dest) and dest.endswith((".md", ".rst")):
                try:
                    if frag not in anchors(dest):
                        bad.append(f"{rel}: {link}: no such heading")
                except ImportError:
                    bad.append(f"{rel}: {link}: docutils missing"
                               " (apt-get install python3-docutils)")
    return bad


def main():
    files = doc_files()

    bad = check_links(files)
    if bad:
        not_ok("every relative link names a file and heading that exist", bad)
    else:
        ok(f"every relative link names a file and heading that exist ({len(files)} pages)")

    bad = []
    for rel in (f for f in files if f.endswith(".rst")):
        try:
            _, report = rst_doctree(os.path.join(ROOT, rel))
        except ImportError:
            bad.append("docutils missing (apt-get install python3-docutils)")
            break
        if report:
            bad += [f"{rel}: {line}" for line in report.splitlines()]
    if bad:
        not_ok("the rST pages convert without warnings", bad)
    else:
        ok("the rST pages convert without warnings")

    readme = os.path.join(ROOT, "README.md")
    linked = set()
    for link in md_links(readme):
        target = link.partition("#")[0]
        if target and not re.match(r"[a-z][a-z0-9+.-]*:", target):
            linked.add(os.path.normpath(target))
    missing = [f for f in files if f != "README.md" and f not in linked]
    if missing:
        not_ok("README.md links to every page", missing)
    else:
        ok("README.md links to every page")

    bad = []
    with open(readme, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            for m in re.finditer(r"\b[0-9a-f]{7,40}\b", line):
                if re.search(r"[0-9]", m.group()) and re.search(r"[a-f]", m.group()):
                    bad.append(f"README.md:{n}: commit {m.group()}")
            for m in re.finditer(r"\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b", line):
                bad.append(f"README.md:{n}: date {m.group()}")
    if bad:
        not_ok("README.md names no commit and no date", bad)
    else:
        ok("README.md names no commit and no date")

    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
