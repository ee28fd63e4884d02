#!/usr/bin/env python3
"""Rewrites the example outputs in README.md from the binary itself.

Every fenced block whose info string is `console` holds commands (`$ journey ...`) and what
they printed (stderr first, then stdout: journey writes its one stderr line, the seed, before
any text). This script runs each command with the default model and writes the output back;
tests/cli/test_cli_readme.cpp runs them again and fails if the README has drifted.

    scripts/readme_examples.py [--binary build/journey] [--check]
"""
import argparse
import pathlib
import shlex
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run(binary, command):
    args = shlex.split(command)
    assert args[0] == "journey", command
    p = subprocess.run([binary] + args[1:], capture_output=True, env={"OPENBLAS_NUM_THREADS": "1"})
    if p.returncode != 0:
        sys.exit(f"{command}: exit {p.returncode}: {p.stderr.decode()}")
    return (p.stderr + p.stdout).decode().rstrip("\n")


def rewrite(text, binary):
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        out.append(lines[i])
        if lines[i] != "```console":
            i += 1
            continue
        i += 1
        commands = []
        while lines[i] != "```":
            if lines[i].startswith("$ "):
                commands.append(lines[i][2:])
            i += 1
        for k, c in enumerate(commands):
            if k:
                out.append("")
            out.append("$ " + c)
            out.extend(run(binary, c).split("\n"))
        out.append("```")
        i += 1
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=str(ROOT / "build" / "journey"))
    ap.add_argument("--check", action="store_true", help="exit 1 if the README would change")
    a = ap.parse_args()
    readme = ROOT / "README.md"
    old = readme.read_text()
    new = rewrite(old, a.binary)
    if a.check:
        sys.exit(0 if new == old else "README.md examples differ from the binary's output")
    readme.write_text(new)


if __name__ == "__main__":
    main()
