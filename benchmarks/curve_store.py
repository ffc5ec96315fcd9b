"""Search curves kept between runs of the benchmarks that need thousands of seeded searches.

The leaderboard runs some twenty tuners on twenty-odd landscapes with 20 seeds of 400
measurements: tens of CPU hours, more than one sitting.  Every run is seeded, so a curve once
measured is a fact about (landscape, tuner, the code that ran, budget, seed); this store keeps
those facts in benchmarks/results/curves/, one JSON file per landscape, so that a run stopped
half-way resumes where it was and the peers (whose code does not change with ours) run once.

What makes a curve stale is named, not guessed: the landscape by the SHA-256 of its file (a
HypoGPU export changes with the model), one of our tuners by a hash of the sources that decide its
search (autotune/ but the search strategies in autotune/tuners/ it does not import, and the
replay device and configs of minitriton: a change to one strategy leaves the others' curves
standing, and a module of autotune/ that no search imports (the decorator, the disk cache, the
command line) leaves every curve standing), a peer by its library's version and the hash of benchmarks/peers.py.  A curve whose code hash differs is not used (and is replaced
when measured again).

A seed's run is repeatable on one machine.  Across machines it need not be: the searches with a
model (XGBoost's trees, the Gaussian process's solves) can take another path on a CPU with other
vector units (seen: Ansor on one HypoGPU landscape, the same from its first batch, apart after
it); random sampling and the peers measured again on another machine matched exactly.  A store
filled on several machines holds valid samples of each search, not bit-equal repeats.

The files are data: read with a size cap, parsed as JSON, every entry checked; a bad file or
entry is ignored (and measured again), never trusted and never executed.
"""
from __future__ import annotations

import ast
import fcntl
import hashlib
import json
import os
import pathlib
import tempfile

import numpy as np

from benchmarks.common import ROOT

STORE = ROOT / "benchmarks" / "results" / "curves"
MAX_FILE_BYTES = 64 << 20      # a store file larger than this is not read
LOCK = ".lock"                # held while a file is read again and rewritten
DIGITS = 6                     # significant digits kept of a share of the optimum

# the sources whose change makes our tuners' stored curves stale
OUR_SOURCES = ("autotune", "minitriton/replay.py", "minitriton/configs.py")


STRATEGIES = "autotune/tuners"   # one module per search strategy; the package's __init__ is shared


def strategy_modules(names, root=ROOT) -> list:
    """The strategy modules (paths relative to root) that the modules `names` (file stems in
    STRATEGIES) import, directly or through each other, themselves included: read from their
    `from .x import` lines, not by importing them."""
    todo, found = list(names), set()
    while todo:
        stem = todo.pop()
        path = root / STRATEGIES / f"{stem}.py"
        if stem in found or not path.is_file():
            continue
        found.add(stem)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                todo += [node.module] if node.module else [a.name for a in node.names]
    return sorted(f"{STRATEGIES}/{stem}.py" for stem in found)


# what a search runs: tune() and the task it is given (the leaderboard imports nothing else of autotune/)
SEARCH_ROOTS = ("autotune/driver.py", "autotune/task.py")


def _imported(path: pathlib.Path, root) -> list:
    """The files of `root` that the relative imports of the module at `path` name."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.ImportFrom) and node.level):
            continue
        base = path.parent
        for _ in range(node.level - 1):
            base = base.parent
        if node.module:
            base = base.joinpath(*node.module.split("."))
        targets = [base] if node.module else []
        targets += [base / a.name for a in node.names]     # `from .pkg import module` names a module too
        for t in targets:
            for f in (t.with_suffix(".py"), t / "__init__.py"):
                if f.is_file():
                    out.append(f)
    return out


def search_modules(root=ROOT) -> set:
    """The modules of autotune/ that a search runs: SEARCH_ROOTS and what they import, directly or
    through each other (relative imports, read from the sources), as paths relative to root.  The
    package's own __init__ (which only names what it exports), the @autotune decorator, the disk
    cache and the command line are not among them, so a change there makes no curve stale."""
    todo = [root / r for r in SEARCH_ROOTS if (root / r).is_file()]
    found = set()
    while todo:
        f = todo.pop()
        rel = f.relative_to(root).as_posix()
        if rel in found:
            continue
        found.add(rel)
        todo += _imported(f, root)
    return found


def tuner_sources(names, root=ROOT) -> list:
    """What decides the searches of the strategy modules `names`: OUR_SOURCES less the strategy
    modules they do not import and less the strategies' registry (STRATEGIES/__init__.py, which
    lists every strategy by name and picks the default: a new strategy or another default changes
    no other strategy's search; the function that builds a search from its name is hashed by the
    caller).  A file list, relative to root."""
    mine = set(strategy_modules(names, root))
    searched = search_modules(root)
    out = []
    for rel in OUR_SOURCES:
        p = root / rel
        for f in (sorted(p.rglob("*.py")) if p.is_dir() else [p] if p.is_file() else []):
            r = f.relative_to(root).as_posix()
            strategy = r.startswith(STRATEGIES + "/") and r.count("/") == 2
            if r == f"{STRATEGIES}/__init__.py":
                continue            # the registry of names: the caller hashes the one function that builds a search
            if r.startswith("autotune/") and r not in searched:
                continue            # no search imports it
            if not strategy or r in mine:
                out.append(r)
    return out


def file_hash(path) -> str:
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def code_text(source: str) -> str:
    """What of a module's source decides what it does: its syntax tree without docstrings (a
    comment or a reworded docstring changes no search, so it makes no stored curve stale)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body and
                isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and
                isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def sources_hash(paths, root=ROOT) -> str:
    """One hash of the .py files under `paths` (folders or files, relative to root), by what
    their code does (code_text)."""
    h = hashlib.sha256()
    for rel in paths:
        p = root / rel
        files = sorted(p.rglob("*.py")) if p.is_dir() else [p]
        for f in files:
            h.update(str(f.relative_to(root)).encode() + b"\0" + code_text(f.read_text()).encode() + b"\0")
    return h.hexdigest()[:16]


def encode(curve) -> list:
    """A non-decreasing curve as its steps: [[measurement index, share], ...]."""
    c = np.asarray(curve, float)
    change = np.flatnonzero(np.concatenate([[True], c[1:] != c[:-1]]))
    return [[int(i), float(f"{c[i]:.{DIGITS}g}")] for i in change]


def decode(steps, budget: int):
    """The curve back from its steps, or None if they are not a valid curve of `budget` points."""
    if not isinstance(steps, list) or not steps or len(steps) > budget:
        return None
    out = np.empty(budget)
    last = -1
    for step in steps:
        if not (isinstance(step, list) and len(step) == 2 and type(step[0]) is int and
                isinstance(step[1], (int, float)) and not isinstance(step[1], bool)):
            return None
        i, v = step
        if not (last < i < budget) or not (0.0 <= v <= 1.0 + 1e-9) or (last < 0 and i != 0):
            return None
        out[i:] = v
        last = i
    return out


class Store:
    """The curves of one folder: get(landscape path, run, code, budget, seed) and put(...)."""

    def __init__(self, folder=STORE):
        self.folder = pathlib.Path(folder)
        self._docs: dict = {}      # landscape sha -> its document, as read or written
        self._names: dict = {}     # landscape path -> (sha, file name)

    def _key(self, path):
        if path not in self._names:
            sha = file_hash(path)
            stem = pathlib.Path(path).name.split(".json")[0]
            self._names[path] = (sha, f"{stem}-{sha[:12]}.json")
        return self._names[path]

    def _doc(self, path) -> dict:
        sha, fname = self._key(path)
        if sha not in self._docs:
            doc = None
            f = self.folder / fname
            try:
                if f.is_file() and f.stat().st_size <= MAX_FILE_BYTES:
                    doc = json.loads(f.read_text())
            except (OSError, ValueError, UnicodeDecodeError, RecursionError):
                doc = None
            if not (isinstance(doc, dict) and doc.get("sha256") == sha and isinstance(doc.get("runs"), dict)):
                doc = {"landscape": fname.rsplit("-", 1)[0], "sha256": sha, "runs": {}}
            self._docs[sha] = doc
        return self._docs[sha]

    def get(self, path, run: str, code: str, budget: int, seed: int):
        """(the stored curve, the chosen config's share of the optimum), or None (absent, stale or
        malformed)."""
        entry = self._doc(path)["runs"].get(run)
        if not (isinstance(entry, dict) and entry.get("code") == code and entry.get("budget") == budget and
                isinstance(entry.get("curves"), dict) and isinstance(entry.get("chosen"), dict)):
            return None
        curve, chosen = decode(entry["curves"].get(str(seed)), budget), entry["chosen"].get(str(seed))
        if curve is None or not (isinstance(chosen, (int, float)) and not isinstance(chosen, bool) and
                                 0.0 <= chosen <= 1.0 + 1e-9):
            return None
        return curve, float(chosen)

    def put(self, path, run: str, code: str, budget: int, seed: int, curve, chosen: float):
        """Keep one search's curve and the share of the optimum of the config it chose.  The file
        is read again under a lock and written whole, so that two benchmarks filling the store at
        once (another seed range, the peers beside ours) keep each other's runs."""
        sha, fname = self._key(path)
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / LOCK, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._docs.pop(sha, None)                # what another process wrote since we read it
            doc = self._doc(path)
            entry = doc["runs"].get(run)
            if not (isinstance(entry, dict) and entry.get("code") == code and entry.get("budget") == budget and
                    isinstance(entry.get("curves"), dict) and isinstance(entry.get("chosen"), dict)):
                entry = doc["runs"][run] = {"code": code, "budget": budget, "curves": {}, "chosen": {}}
            entry["curves"][str(seed)] = encode(curve)
            entry["chosen"][str(seed)] = float(f"{chosen:.{DIGITS}g}")
            # a temporary file renamed over the old one: never half-written
            fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(fd, "w") as out:
                json.dump(doc, out, separators=(",", ":"), sort_keys=True)
            os.replace(tmp, self.folder / fname)
