"""Loops whose trips are independent run all at once, each trip a lockstep row of its own.

A persistent kernel walks its share of the work in a loop,

    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(in_ptr + row * stride + cols)
        tl.store(out_ptr + row * stride + cols, f(x))

so that a GPU keeps a fixed number of programs resident.  Run trip by trip, the executor pays
every statement once per trip, on a few rows (one per program).  But when no trip depends on
another -- every variable the body assigns is assigned before it is read in that trip, none is
read after the loop, nothing is loaded from memory the body stores to, no atomics, no prints,
no jumps out -- the trips may as well run side by side: each (program, trip) pair becomes a row
of a sub-launch, which runs the body once, as a kernel with one program per row would.  The
rows of one program keep their trip order, so a later trip's store still lands last.

Lowering (lowering.py) recognises such loops in the syntax tree (`plan`) at the kernel's top
level and puts both forms in the code: `start` decides at run time (all programs running, no
tracing, trip counts known, the loaded and stored arrays distinct) and the ordinary loop runs
whenever it says no.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from . import context, narrowing
from . import dtypes as D
from .addresses import MixedBuffer
from .block_ptr import block_pointer
from .control import Frame
from .ranges import Range
from .tensor import tensor

MAX_ROWS = 1 << 14          # (program, trip) rows a loop may become; more runs trip by trip
_RANGES = {"range"}          # (tl.static_range unrolls: its variable is a Python int)
_REFUSED_CALLS = {"print", "device_print", "static_print", "debug_barrier"}
_enabled = True


def set_enabled(on: bool) -> bool:
    """Switch the transformation (tests compare both ways); returns the previous setting."""
    global _enabled
    prev, _enabled = _enabled, bool(on)
    return prev


# ---------------------------------------------------------------- recognising the loop
@dataclass
class Plan:
    reads: list          # the kernel's variables the body reads and does not assign
    assigned: list       # what the body assigns (dead after the loop)
    loaded: list         # variables the pointers of the body's loads are built from
    stored: list         # ... and of its stores


def _names(node) -> set:
    return {x.id for x in ast.walk(node) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)}


def _bound(node) -> set:
    return {x.id for x in ast.walk(node) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}


def _reads_of(stmt) -> set:
    r = _names(stmt)
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        r.add(stmt.target.id)
    return r


def _defined_after(stmts, defined: set, assigned: set):
    """The names bound after `stmts` run, given those bound before; None when a statement reads
    a name the loop body assigns before this trip has bound it (a value carried between trips)."""
    for s in stmts:
        if isinstance(s, (ast.For, ast.While)):
            head = _names(s.iter) if isinstance(s, ast.For) else _names(s.test)
            if (head & assigned) - defined:
                return None
            inner = defined | (_bound(s.target) if isinstance(s, ast.For) else set())
            if _defined_after(s.body, inner, assigned) is None or s.orelse:
                return None
            # (what the inner loop binds may not be bound at all: zero trips; so it adds nothing)
        elif isinstance(s, ast.If):
            if (_names(s.test) & assigned) - defined:
                return None
            a, b = _defined_after(s.body, defined, assigned), _defined_after(s.orelse, defined, assigned)
            if a is None or b is None:
                return None
            defined = a & b
        elif isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Assert, ast.Pass)):
            if (_reads_of(s) & assigned) - defined:
                return None
            defined = defined | _bound(s)
        else:
            return None
    return defined


def _pointer_roots(body, fn: str) -> set:
    """Names the first argument of every `fn(...)` call in the body is built from (through the
    body's own assignments)."""
    roots = set()
    for x in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(x, ast.Call):
            name = x.func.attr if isinstance(x.func, ast.Attribute) else getattr(x.func, "id", None)
            if name == fn:
                first = x.args[0] if x.args else next((k.value for k in x.keywords if k.arg == "pointer"), None)
                if first is not None:
                    roots |= _names(first)
    changed = True
    while changed:
        changed = False
        for x in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(x, (ast.Assign, ast.AugAssign)):
                targets = _bound(x)
                if targets & roots:
                    new = _names(x.value) - roots
                    if new:
                        roots |= new
                        changed = True
    return roots


def plan(node: ast.For, reads: list, loads: dict) -> Plan | None:
    """A Plan when the loop's trips are independent (module docstring), else None.  `reads` are
    the kernel variables the body reads and does not assign; `loads` counts every read of each
    name in the whole kernel."""
    it = node.iter
    is_range = isinstance(it, ast.Call) and (
        isinstance(it.func, ast.Name) and it.func.id in _RANGES or
        isinstance(it.func, ast.Attribute) and it.func.attr in _RANGES)
    if not is_range or not isinstance(node.target, ast.Name) or node.orelse:
        return None
    for x in ast.walk(ast.Module(body=node.body, type_ignores=[])):
        if isinstance(x, (ast.Return, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal, ast.FunctionDef,
                          ast.Lambda, ast.ClassDef, ast.Raise, ast.Try, ast.With)):
            return None
        if isinstance(x, ast.Call):
            name = x.func.attr if isinstance(x.func, ast.Attribute) else getattr(x.func, "id", "")
            if name.startswith("atomic_") or name in _REFUSED_CALLS:
                return None
        if isinstance(x, ast.Attribute) and x.attr == "pointer_type":      # pointers from addresses
            return None
    if _contains_jump(node.body):
        return None
    target = node.target.id
    assigned = sorted(set().union(*[_bound(s) for s in node.body]) - {target})
    if _defined_after(node.body, {target}, set(assigned)) is None:
        return None
    inside = {}
    for s in node.body + [node.target]:
        for x in ast.walk(s):
            if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load) or isinstance(x, ast.AugAssign):
                n = x.id if isinstance(x, ast.Name) else getattr(x.target, "id", None)
                if n is not None:
                    inside[n] = inside.get(n, 0) + 1
    if any(loads.get(n, 0) > inside.get(n, 0) for n in assigned + [target]):
        return None                        # read after the loop (or before it): not the body's own
    reads = [r for r in reads if r != target]
    loaded = sorted(_pointer_roots(node.body, "load") & set(reads))
    stored = sorted(_pointer_roots(node.body, "store") & set(reads))
    return Plan(reads, assigned, loaded, stored)


def _contains_jump(body) -> bool:
    """A break or continue of this loop (not of a loop nested in it)."""
    todo = list(body)
    while todo:
        x = todo.pop()
        if isinstance(x, (ast.Break, ast.Continue)):
            return True
        if not isinstance(x, (ast.For, ast.While)):
            todo.extend(ast.iter_child_nodes(x))
        else:
            todo.extend(x.orelse)
    return False


# ---------------------------------------------------------------- running it
def _storages(values):
    out = set()
    for v in values:
        if isinstance(v, block_pointer):
            v = v.base
        if isinstance(v, tensor) and v.buf is not None:
            if isinstance(v.buf, MixedBuffer):
                return None                 # a pointer built from an address: any array
            out.add(id(v.buf.storage))
    return out


class Lanes:
    """A loop run as one trip of (program, trip) rows; `values` are the reads and the loop
    variable as those rows see them, `close` returns to the launch and the reads' own values."""

    def __init__(self, st, sub, reads, values):
        self.st, self.sub, self.reads, self.values = st, sub, reads, values

    def close(self):
        st, sub = self.st, self.sub
        context.LOCAL.state = st
        st.writes += sub.writes
        st.narrowed += sub.narrowed
        st.fused += sub.fused
        st.laned += 1
        return self.reads


def start(iterable, reads: tuple, loaded: tuple, stored: tuple):
    """The loop as Lanes when it can run so (module docstring), else None."""
    st = context.current()
    if not _enabled or not isinstance(iterable, Range) or st.counts is not None or st.active is not None \
            or not all(isinstance(c, Frame) for c in st.contexts) or context.LOCAL.__dict__.get("trip_by_trip"):
        return None                          # tracing, diverged, inside a loop or a split branch, or too big
    if not narrowing.movable(reads):
        return None
    ld, sd = _storages(loaded), _storages(stored)
    if ld is None or sd is None or ld & sd:
        return None
    args = [a.v.reshape(-1).astype(np.int64) if isinstance(a, tensor) else np.array([int(a)], np.int64)
            for a in iterable.args]
    first, end, step = (np.broadcast_to(v, (st.rows,)) for v in args)
    if (step == 0).any():
        return None
    trips = np.maximum(0, np.where(step > 0, (end - first + step - 1) // np.where(step > 0, step, 1),
                                   (first - end - step - 1) // np.where(step < 0, -step, 1)))
    total = int(trips.sum())
    if total <= st.rows or total > MAX_ROWS:
        return None                          # nothing to gain (one trip each), or too many rows
    # trip-major rows: every program's first trip, then every second trip, ...  A program's trips
    # stay in order (its later stores land later), and a persistent loop's rows come out in the
    # order of the work they cover (row p + P*k), so its loads are windows, not gathers
    k, idx = np.nonzero(trips[None, :] > np.arange(int(trips.max()))[:, None])
    dt = D.int32
    for a in iterable.args:
        if isinstance(a, tensor):
            dt = D.promote(dt, a.dtype)
    index = tensor(None, dt, (), aff=(first[idx] + step[idx] * k, ()))
    sub = context.LaunchState(st.name, st.grid, st.pids[idx], st.buffers, st.num_warps)
    sub.space, sub.contexts = st.space, list(st.contexts)
    values = narrowing.take(tuple(reads), idx, st.rows) + (index,)
    context.LOCAL.state = sub
    return Lanes(st, sub, tuple(reads), values)
