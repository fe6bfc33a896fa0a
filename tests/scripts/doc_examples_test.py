#!/usr/bin/env python3
"""Every `ftax` example in README.md and docs/ runs as written, and every repository path that
the docs and validation/'s records cite exists.

Examples are the command lines inside code blocks (indented or fenced) that start with
`ftax`, `build/ftax` or `build-gpu/ftax` and a subcommand (a trailing backslash joins the next
line; `# ...` comments are dropped). Each runs from a scratch directory that sees the
repository's top-level folders, so files it writes land there, through bash (globs expand)
with the built binary ($FTAX_BINARY, default build/ftax) as `ftax` and `build/ftax`, and must
exit 0; examples run in the order the file gives them, so one may use what an earlier one wrote. Skipped, and listed when verbose:
synopsis lines (placeholders in capitals, [optional] or a|b parts), runs that need a CUDA
host (`bench`, `validate` of TorchScript files), and lines of sample output.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FTAX = os.environ.get("FTAX_BINARY", os.path.join(ROOT, "build", "ftax"))
SUBCOMMANDS = {"inspect", "predict", "compare", "bench", "calibrate", "validate", "profiles"}
DOCS = ["README.md"] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def code_lines(path):
    """(line number, text) of every line inside a code block of a Markdown file."""
    fenced = False
    with open(os.path.join(ROOT, path)) as f:
        text = f.read()
    for n, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    "):
            yield n, line


def examples(path):
    """(line, command) of every ftax example in `path`."""
    lines = list(code_lines(path))
    i = 0
    while i < len(lines):
        n, text = lines[i]
        cmd = re.sub(r"^\s*\$?\s*", "", text)
        m = re.match(r"(?:build(?:-gpu)?/)?ftax (\w+)\b(?!:)", cmd)
        if m and m.group(1) in SUBCOMMANDS:
            cmd = re.sub(r"\s+#.*$", "", cmd)
            while cmd.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd.rstrip()[:-1] + " " + re.sub(r"\s+#.*$", "", lines[i][1].strip())
            yield n, cmd.strip()
        i += 1


def why_skipped(cmd):
    words = shlex.split(cmd)
    sub = words[1]
    if re.search(r"\[|\.\.\.|\b[A-Z]{2,}[A-Z_]*\b(?!\w*[a-z])|\w\|\w", cmd.split(" ", 2)[2] if len(words) > 2 else ""):
        return "synopsis"
    if sub == "bench" or (sub == "validate" and any(w.endswith(".pt") for w in words[2:])):
        return "needs a CUDA host"
    return None


class DocExamplesTest(unittest.TestCase):
    def test_every_example_runs(self):
        if not os.access(FTAX, os.X_OK):
            self.skipTest(f"no ftax binary at {FTAX}")
        scratch = tempfile.mkdtemp(prefix="ftax-doc-examples-")
        try:
            for entry in os.listdir(ROOT):
                if not entry.startswith(".") and not entry.startswith("build"):
                    os.symlink(os.path.join(ROOT, entry), os.path.join(scratch, entry))
            os.makedirs(os.path.join(scratch, "build"))
            os.symlink(FTAX, os.path.join(scratch, "build", "ftax"))
            failures, ran = [], 0
            for doc in DOCS:
                rel = os.path.relpath(os.path.join(ROOT, doc), ROOT)
                for n, cmd in examples(rel):
                    if why_skipped(cmd):
                        continue
                    # As a user's shell runs it: globs expand, `ftax` is the built binary.
                    env = dict(os.environ, PATH=os.path.join(scratch, "build") + os.pathsep + os.environ["PATH"])
                    r = subprocess.run(["bash", "-c", cmd], cwd=scratch, env=env, capture_output=True, text=True,
                                       timeout=300)
                    ran += 1
                    if r.returncode != 0:
                        failures.append(f"{rel}:{n}: exit {r.returncode}: {cmd}\n    {r.stderr.strip()[:400]}")
            self.assertGreater(ran, 20, "too few examples found: is the extraction broken?")
            self.assertEqual(failures, [], "\n" + "\n".join(failures))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def test_every_cited_path_exists(self):
        missing = []
        records = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "validation", "*.md")))
        for doc in DOCS + records + ["data/profiles/README.md"]:
            path = os.path.join(ROOT, doc)
            if not os.path.exists(path):
                missing.append(f"{doc} itself")
                continue
            with open(path) as f:
                text = f.read()
            base = os.path.dirname(path)
            for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
                if re.match(r"[a-z]+://", target):
                    continue
                if not os.path.exists(os.path.normpath(os.path.join(base, target))):
                    missing.append(f"{doc}: link ({target})")
            for cited in re.findall(r"`((?:src|docs|scripts|tests|data|validation|python|bench)/[^`\s*]+)`", text):
                if re.search(r"[A-Z]{2,}|NAME|DATE|GPU|\{|<", cited):
                    continue  # a pattern, not a path
                p = cited.rstrip("/.,:;")
                if not (os.path.exists(os.path.join(ROOT, p)) or os.path.exists(os.path.join(base, p))):
                    missing.append(f"{doc}: `{cited}`")
        self.assertEqual(missing, [], "\n" + "\n".join(missing))


if __name__ == "__main__":
    unittest.main()
