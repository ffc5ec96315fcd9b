"""Critical sections behind a spin lock run in rounds, each round on the programs it admits.

Triton's layer-norm backward pass accumulates partial sums under a lock per group of rows:

    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    ...read, add to and write the group's partial sums...
    tl.atomic_xchg(Lock, 0)

On a GPU the programs holding a lock go on while the others spin.  In lockstep every program
waits at the end of the loop for the rest, so the holders can never release and the loop makes
no progress (control.Loop notices and raises Stalled); the launch then runs again in groups no
larger than the number of locks, every statement of the kernel paid once per group.

This module keeps the launch whole up to the lock and serialises only what follows it.  The
programs at the lock are ranked, per lock address, in program order; round r runs the rest of
the kernel on the programs of rank r -- at most one per lock, so each takes its lock at once --
with the launch narrowed to them (narrowing.py).  That is a schedule a GPU may run: every
program reaches the lock, and each lock goes to its programs in turn, the order in which the
groups of the fallback would have taken it, so the sums come out with the same bits.

Lowering (lowering.py) asks `spin_pointer` whether a statement of a kernel's top level is such
a loop and wraps it and everything after it in a loop over `Rounds`, after taking out of it the
arithmetic every round would repeat on the same inputs (`invariants`: layer norm's
`DW + lock_id * N + cols`), computed once for all programs before the rounds.  Whatever the rounds do
not make safe they leave to the old way: a lock pointer that is not one address per program,
values that cannot move between row sets, tracing (whose counts want every program), and a
round whose loop still spins (the lock is not released, or the programs wait for something
else) raises Stalled as before.
"""
from __future__ import annotations

import ast
import copy

import numpy as np

from . import context, narrowing
from .tensor import tensor

_LOCK_CALL = "atomic_cas"
_enabled = True


def set_enabled(on: bool) -> bool:
    """Switch the transformation (tests compare both ways); returns the previous setting."""
    global _enabled
    prev, _enabled = _enabled, bool(on)
    return prev


# ---------------------------------------------------------------- recognising the lock
def _called(func) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _pure(node, name_ok=lambda name: True) -> bool:
    """An expression that gives the same value when evaluated twice in a row: names (those
    `name_ok` accepts), numbers and arithmetic on them."""
    if isinstance(node, ast.Name):
        return name_ok(node.id)
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.BinOp):
        return _pure(node.left, name_ok) and _pure(node.right, name_ok)
    if isinstance(node, ast.UnaryOp):
        return _pure(node.operand, name_ok)
    return False


def spin_pointer(stmt) -> ast.expr | None:
    """The lock pointer `P` of a loop `while ... tl.atomic_cas(P, ...) ...: pass`, or None."""
    if not isinstance(stmt, ast.While) or stmt.orelse:
        return None
    if not all(isinstance(s, ast.Pass) or isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
               for s in stmt.body):
        return None
    calls = [c for c in ast.walk(stmt.test) if isinstance(c, ast.Call) and _called(c.func) == _LOCK_CALL]
    if len(calls) != 1:
        return None
    call = calls[0]
    pointer = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "pointer"), None)
    return pointer if pointer is not None and _pure(pointer) else None


def invariants(region, before, fresh):
    """The arithmetic of the region that every round would compute again with the same inputs
    (`DW + lock_id * N + cols`: names bound before the lock and never rebound in the region),
    taken out of it: (assignments to run once before the rounds, the region reading their names
    instead).  Each round then takes the values' rows (narrowing.take) instead of computing
    them anew; the values are the same, only computed once for every program.  `fresh()` names
    a new variable."""
    assigned = {n.id for s in region for n in ast.walk(s) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    region = copy.deepcopy(region)
    hoisted, seen = [], {}

    def invariant(node) -> bool:
        return _pure(node, lambda name: name in before and name not in assigned)

    class Hoist(ast.NodeTransformer):
        def visit_BinOp(self, node):
            if not invariant(node):
                return self.generic_visit(node)
            key = ast.dump(node)
            if key not in seen:
                seen[key] = fresh()
                hoisted.append(ast.Assign(targets=[ast.Name(seen[key], ast.Store())], value=node))
            return ast.copy_location(ast.Name(seen[key], ast.Load()), node)

        def visit_Lambda(self, node):       # their own scope: left as they are
            return node

        visit_FunctionDef = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda

    spin, rest = region[0], [Hoist().visit(st) for st in region[1:]]
    return [ast.fix_missing_locations(h) for h in hoisted], [spin] + rest


def region_allowed(stmts) -> bool:
    """The statements from the lock to the end of the body may run once per round: nothing in
    them leaves the function or rebinds names outside it."""
    return not any(isinstance(x, (ast.Return, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal))
                   for s in stmts for x in ast.walk(s))


# ---------------------------------------------------------------- running the rounds
def _ranks(pointer, st) -> list[np.ndarray] | None:
    """Row indices of each round: the active programs grouped by their rank among the programs
    with the same lock address, in program order; None when there is nothing to split."""
    if type(pointer) is not tensor or pointer.buf is None or pointer.shape:
        return None
    off = pointer.v.reshape(-1)
    if off.shape[0] not in (1, st.rows):
        return None
    rows = np.arange(st.rows) if st.active is None else np.flatnonzero(st.active)
    if rows.size < 2:
        return None
    keys = np.broadcast_to(off, (st.rows,))[rows]
    order = np.argsort(keys, kind="stable")           # by address, program order within one
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    run_start = np.repeat(starts, np.diff(np.r_[starts, keys.size]))
    rank = np.empty(keys.size, np.int64)
    rank[order] = np.arange(keys.size) - run_start
    rounds = int(rank.max()) + 1
    if rounds == 1:
        return None
    return [rows[rank == r] for r in range(rounds)]


class Rounds:
    """Iterating gives the values the region reads, cut to one round's programs, with the launch
    narrowed to them; once, unchanged, when the region runs on every program at a time."""

    def __init__(self, pointer, values: tuple):
        st = self.st = context.current()
        self.values = values
        self.plan = None
        if _enabled and st.counts is None and narrowing.movable(values):
            self.plan = _ranks(pointer, st)
        self.sub = None

    def __iter__(self):
        if self.plan is None:
            yield self.values
            return
        st = self.st
        for idx in self.plan:
            sub = self.sub = context.LaunchState(st.name, st.grid, st.pids[idx], st.buffers, st.num_warps)
            sub.space = st.space
            context.LOCAL.state = sub
            yield narrowing.take(self.values, idx, st.rows)
            self._back()

    def _back(self):
        st, sub, self.sub = self.st, self.sub, None
        context.LOCAL.state = st
        if sub is not None:
            st.writes += sub.writes
            st.narrowed += sub.narrowed
            st.fused += sub.fused
            st.laned += sub.laned
            st.rounds += 1

    def close(self):
        """After the region (or an error in it): the launch's own state again."""
        self._back()
