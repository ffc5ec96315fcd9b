"""Shared benchmark plumbing: timing, markdown tables, and refreshing the README's tables."""
from __future__ import annotations

import argparse
import pathlib
import platform
import re
import statistics
import time

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="fewer repeats, for a smoke run (under a minute)")
    p.add_argument("--update-readme", action="store_true", help="write the table into README.md")
    return p


def main(doc: str, name: str, make_text, argv=None):
    """The command line every benchmark shares: print the text `make_text(quick)` makes, and
    with --update-readme put it in the README's <!-- bench:name --> block."""
    args = parser(doc).parse_args(argv)
    text = make_text(args.quick)
    print(text)
    if args.update_readme:
        update_readme(name, text)


def median_time(fn, repeats: int, warmup: int = 1) -> float:
    """Median wall time of fn() in seconds."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def markdown(header, rows) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def machine() -> str:
    import numpy as np
    return f"{platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}"


def update_readme(name: str, text: str):
    """Replace the block between <!-- bench:name --> and <!-- /bench:name --> in README.md."""
    src = README.read_text()
    pattern = re.compile(rf"(<!-- bench:{name} -->\n).*?(<!-- /bench:{name} -->)", re.S)
    if not pattern.search(src):
        raise SystemExit(f"README.md has no <!-- bench:{name} --> block to update")
    README.write_text(pattern.sub(lambda m: m.group(1) + text.rstrip() + "\n" + m.group(2), src))
