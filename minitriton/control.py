"""Divergent control flow in lockstep: branches and loops run under a mask of active programs.

A GPU runs the threads of a warp that disagree on a branch by masking: each side runs with
the threads that take it.  The executor does the same with programs.  `lowering.py` rewrites
a kernel's `if`, `while`, `for`, `break`, `continue` and `return` into calls on the
contexts below.  When every active program agrees (the usual case) they cost one check and
plain Python control flow runs.  When programs disagree:

- an `if` runs each side with the programs that take it, then merges every variable either
  side assigned (`where(cond, then_value, else_value)`);
- a loop keeps running while any program still loops; a program that leaves (its condition
  fails, its trip count ends, it breaks) keeps the values it had when it left;
- `continue` parks a program until the next trip, `return` until the function ends.

Loads, stores and atomics read the launch's active mask (`LaunchState.active`), so inactive
programs touch no memory; their other values are computed and thrown away at the merge.  A
loop whose remaining programs can make no progress without the parked ones (a spin lock
held by a program waiting after the loop) raises `Divergent`, and the launch runs one
program at a time.
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from . import carried, context, narrowing
from .dtypes import constexpr
from .errors import BlockCondition, CompilationError
from .block_ptr import block_pointer
from .tensor import POISON, Stalled, tensor, to_tensor
from .arithmetic import compare_chain, logical_and, logical_or, logical_not  # noqa: F401 (compare_chain: lowered code's)
from .debug import device_assert
from .merging import UNDEF, ExitRows, merge, select
from .ranges import Range, StaticRange, condition
from .shapes import item


def get(local_vars: dict, names: tuple) -> tuple:
    return tuple(local_vars.get(n, UNDEF) for n in names)


# ---------------------------------------------------------------- masks (None means every row)
def _and(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def _andnot(a, b):
    """a and not b."""
    if b is None:
        return np.zeros_like(a) if a is not None else None
    return ~b if a is None else a & ~b


def _count(m, rows):
    return rows if m is None else int(m.sum())


def _state():
    st = context.current()
    return st


# ---------------------------------------------------------------- contexts
class _Context:
    """One entry of the launch's context stack: the active mask to restore on leaving it."""
    saved = None

    def remove(self, gone):
        """Programs `gone` left through a jump (break, continue, return) out of this context."""
        self.saved = _andnot(self.saved, gone) if self.saved is not None else ~gone


def _jump(st, owner, gone):
    """Remove `gone` from the active mask and from every context above `owner` (the loop or
    function the jump leaves), which would otherwise restore them on exit."""
    st.active = _andnot(st.active, gone) if st.active is not None else ~gone
    for ctx in reversed(st.contexts):
        if ctx is owner:
            break
        ctx.remove(gone)


def _active_rows(st):
    return np.ones(st.rows, bool) if st.active is None else st.active


class Frame(_Context):
    """A kernel or jitted helper's body: collects the return values of programs that return
    early, and removes them from the rest of the body."""

    def __init__(self, returns_value=False):
        st = self.st = _state()
        self.returns_value = returns_value   # the body has a `return value` somewhere
        self.saved = st.active
        self.alive = st.active
        self.returned = None   # rows that have returned
        self.value = None
        st.contexts.append(self)

    def remove(self, gone):  # a jump never leaves a frame except by return
        pass

    def ret(self, value):
        """A `return` reached by the active programs; True when no program is left in the body."""
        st = self.st
        now = _active_rows(st)
        alive = np.ones(st.rows, bool) if self.alive is None else self.alive
        if self.returned is None and (now == alive).all():
            self.value, self.returned = value, now  # the common case: everyone returns together
            return True
        self.value = value if self.returned is None else select(now, value, self.value, "return value")
        self.returned = now.copy() if self.returned is None else self.returned | now
        _jump(st, self, now)
        self.alive = _andnot(self.alive, now) if self.alive is not None else ~now
        return not self.alive.any()

    def close(self):
        st = self.st
        while st.contexts and st.contexts.pop() is not self:
            pass
        st.active = self.saved

    def result(self):
        if self.value is None and self.returns_value:
            return POISON       # no program reached a `return value`
        return self.value


class Branch(_Context):
    """`if cond:` — `then`/`orelse` say which sides run; `split` that both do, masked."""

    def __init__(self, cond):
        self.split = False
        self.typed = isinstance(cond, tensor)   # a runtime condition: Triton types both sides (note, check)
        if not isinstance(cond, tensor):
            self.then = bool(cond)
            self.orelse = not self.then
            return
        if cond.shape:      # as Triton's front end: a one-element block, with a warning; else refused
            if cond.numel != 1:
                raise BlockCondition(f"Boolean value of Tensor with more than one value is ambiguous (an if condition "
                                 f"of shape {list(cond.shape)})")
            warnings.warn("If conditional called with multidimensional Tensor instead of scalar; please use "
                          "\"if (cond).item()\" instead", stacklevel=2)
            cond = item(cond)
        st = _state()
        v = cond.v.reshape(-1).astype(bool, copy=False)
        act = st.active
        if v.size == 1:
            self.then = bool(v[0]) and (act is None or act.any())
            self.orelse = not bool(v[0]) and (act is None or act.any())
            return
        took = v if act is None else v[act]
        if took.size == 0:
            self.then = self.orelse = False
            return
        if took.all() or not took.any():
            self.then = bool(took[0])
            self.orelse = not self.then
            return
        self.st, self.cond, self.saved = st, v, act
        self.split = self.then = self.orelse = True
        self.before = ()
        st.contexts.append(self)
        st.active = _and(act, v)

    def note(self, names, vals):
        """The variables the if assigns, as it starts."""
        self.typed_names, self.types = names, carried.types(vals)

    def check(self, vals, side):
        """After one side: Triton compiles an if on a runtime condition only if each variable it
        reassigns keeps the type (and shape) it had before."""
        carried.check(self.typed_names, self.types, vals, lambda name, was, now: (
            f"initial value for `{name}` is of type {was}, but the {side} block redefines it as {now}"))

    def otherwise(self, names, then_vals):
        """Switch to the else side; returns the values the variables had before the if."""
        self.names, self.then_vals = names, then_vals
        self.st.active = _andnot(self.saved, self.cond) if self.saved is not None else ~self.cond
        return self.before

    def merge(self, else_vals):
        st = self.st
        while st.contexts and st.contexts.pop() is not self:
            pass
        st.active = self.saved
        return merge(self.cond, self.names, self.then_vals, else_vals)


# a divergent loop still run by at most this share of its programs narrows to them, and again
# each time the share of those still running falls as low (causal attention's query blocks leave
# one per trip: the rows of programs gone stop costing anything after the next halving)
NARROW_BELOW = 0.5


class Loop(_Context):
    """A `while` or `for` loop.  `sync` turns true once programs disagree; from then on the
    generated code hands the loop its variables at every trip boundary.

    When few programs are left looping, the loop *narrows* to them (narrowing.py): the values it
    reads and assigns are cut to their rows, the remaining trips run on those rows only, and
    `close` spreads the results back.  `reads` names the kernel's variables the loop only
    reads; `narrowable` is False for loops that may `return` out of the kernel."""

    def __init__(self, names, reads=(), narrowable=False, line=None):
        st = self.st = _state()
        self.line = line                # the kernel file's line of this loop (named if it runs away)
        self.deadline = context.deadline()
        self.names = names
        self.reads, self.narrowable = reads, narrowable
        self.outer = None               # while narrowed: the launch's full state to return to
        self.restored = None            # after a narrowed loop: the read variables' full values
        self.saved = st.active          # programs that entered the loop
        self.running = st.active        # still looping (None: all that entered)
        self.sync = False
        self.left = None                # left the loop (condition, trip count or break)
        self.exit_vals = None           # their values at the moment they left
        self.parked = None              # continued: wait for the next trip
        self.cont_vals = None
        self.prev_target = self.last_target = None
        self.target = None
        self.exiting = self.ending = None
        self.is_while = False           # test() seen: only while loops can spin
        self.watch = None               # (values, writes, running) of the last trip: spin detection
        self.quiet_writes, self.quiet_trips = None, 0   # writes at the last test, trips since: test()
        self.carried, self.carried_types = (), ()   # carry(): the variables the loop may change, their types
        self.types_due = 0      # trip tops until same_types checks them: after the first trip, once
        st.contexts.append(self)

    # -- the carried variables' types --------------------------------------------------
    def carry(self, names, vals):
        """The variables the loop assigns that exist before it, as it starts: Triton compiles a
        loop only if each keeps its type (and shape) from trip to trip."""
        typed = [(n, t) for n, t in zip(names, carried.types(vals)) if t is not None]
        self.carried, self.carried_types = tuple(n for n, _ in typed), tuple(t for _, t in typed)
        self.types_due = 2 if typed else 0

    def same_types(self, vals):
        """At the top of the second trip (a type that changes, changes in the first) and after
        the loop; the generated code calls it while `types_due`."""
        self.types_due -= 1
        if self.types_due == 1:
            return      # the first trip's top: the values the loop started with
        carried.check(self.carried, self.carried_types, vals, lambda name, was, now: (
            f"Loop-carried variable {name} has initial type {was} but is re-assigned to {now} in loop! Please make "
            f"sure that the type stays consistent."))

    # -- narrowing to the programs still looping ---------------------------------------
    @property
    def wants_narrow(self) -> bool:
        st = self.st
        return self.sync and self.narrowable and st.counts is None and st.rows >= 8 \
            and st.active is not None and st.active.shape[0] == st.rows \
            and 0 < int(st.active.sum()) <= st.rows * NARROW_BELOW

    @property
    def narrowed(self) -> bool:
        return self.restored is not None

    def narrow(self, vals):
        """`vals`: the reads, the names, then a for loop's target if it is not a name.  Returns them cut to the running programs (or as
        they are, when some value cannot be moved between row sets)."""
        if not narrowing.movable(vals):
            self.narrowable = False
            return vals
        st = self.st
        idx = np.flatnonzero(st.active)
        sub = context.LaunchState(st.name, st.grid, st.pids[idx], st.buffers, st.num_warps)
        sub.space, sub.contexts = st.space, [self]
        n, m = len(self.reads), len(self.names)
        up = self.outer
        root = (st.rows, idx) if up is None else (up["root"][0], up["root"][1][idx])
        self.outer = dict(st=st, idx=idx, reads=vals[:n], vals=vals[n:n + m], left=self.left, exit_vals=self.exit_vals,
                          saved=self.saved, writes=st.writes, up=up, root=root)
        self.left = self.exit_vals = self.saved = self.running = self.watch = None
        self.last_target = narrowing.take(self.last_target, idx, st.rows)
        self.prev_target = narrowing.take(self.prev_target, idx, st.rows)
        st.narrowed += 1
        self.st = sub
        context.LOCAL.state = sub
        return narrowing.take(vals, idx, st.rows)

    def _widen(self, vals):
        """Back to the full launch after a narrowed loop: the looping programs' values spread
        over the others' own."""
        o, sub = self.outer, self.st
        st, idx = o["st"], o["idx"]
        context.LOCAL.state = self.st = st
        st.writes += sub.writes
        st.narrowed += sub.narrowed
        st.fused += sub.fused
        mask = np.zeros(st.rows, bool)
        mask[idx] = True
        full = tuple(select(mask, narrowing.widen(k, idx, st.rows), r, n) for n, k, r in zip(self.names, vals, o["vals"]))
        self.left, self.exit_vals, self.saved = o["left"], o["exit_vals"], o["saved"]
        self.parked, self.outer, self.restored = None, o["up"], o["reads"]
        return full

    def restore_reads(self):
        reads, self.restored = self.restored, None
        return reads

    def remove(self, gone):  # an outer jump (return) passes through: those programs never come back
        self.saved = _andnot(self.saved, gone) if self.saved is not None else ~gone
        self.running = _andnot(self.running, gone) if self.running is not None else ~gone

    # -- programs leaving --------------------------------------------------------------
    def _leave(self, gone, vals):
        """Record the values of programs `gone` as they leave the loop."""
        if not gone.any():
            return
        if self.exit_vals is None:
            self.exit_vals = ExitRows(self.names, self.st.rows)
        self.exit_vals.add(gone, vals)
        self.left = gone.copy() if self.left is None else self.left | gone
        self.running = _andnot(self.running, gone) if self.running is not None else ~gone

    def _go_partial(self):
        self.sync = True

    # -- while -------------------------------------------------------------------------
    def _tick(self):
        """Every trip: a launch past its deadline (a loop whose end never comes) is stopped."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise context.LaunchTimeout(self.st.name, self.line)

    def test(self, cond):
        """The loop condition at the top of a trip: True while any program keeps looping.  A
        loop whose programs all agree hands over its variables only once it has written
        nothing for two trips: from then on head() checks whether it still makes progress (a
        spin on a flag that some other program, parked or not yet run, is to set)."""
        self._tick()
        st = self.st
        self.is_while = True
        if not self.sync:
            if st.writes != self.quiet_writes:
                self.quiet_writes, self.quiet_trips = st.writes, 0
            else:
                self.quiet_trips += 1
                self.sync = self.quiet_trips >= 3
        if isinstance(cond, condition):     # tl.condition(c, disable_licm=...): the loop tests c
            cond = cond.condition
        if not isinstance(cond, tensor):
            if not cond:
                return False
            self.exiting = None
            return True
        if cond.shape:
            raise ValueError(f"a while condition must be a scalar, got a block of shape {list(cond.shape)}")
        v = cond.v.reshape(-1).astype(bool, copy=False)
        act = st.active
        if v.size == 1 or (act is None and (v.all() or not v.any())):
            go = bool(v.all())
            self.exiting = None
            return go and (act is None or act.any())
        stay = v if act is None else act & v
        if not stay.any():
            return False
        now = _active_rows(st)
        exiting = now & ~v
        if not exiting.any():
            self.exiting = None
            return True
        self.exiting = exiting
        self.sync = True
        st.active = stay
        return True

    def after_test(self, vals):
        """Record the values of programs whose condition just failed."""
        if self.exiting is not None:
            self._leave(self.exiting, vals)
            self.exiting = None
        return vals

    # -- for -----------------------------------------------------------------------------
    def iterate(self, iterable, target):
        """Iterate; a range whose bounds differ between programs yields per-program values and
        retires each program when its own trip count ends."""
        if not isinstance(iterable, Range) or isinstance(iterable, StaticRange):
            self.carried, self.types_due = (), 0    # unrolled as Triton compiles it (static_range, a tuple)
        if isinstance(iterable, Range):
            trips = iterable.per_program(self.st)
            if trips is not None:
                values, _, count = trips
                return self._ticking(self._per_program(values, count, target))
        return self._ticking(iter(iterable)) if self.deadline is not None else iter(iterable)

    def _ticking(self, trips):
        for value in trips:
            self._tick()
            yield value

    def _per_program(self, values, count, target):
        st = self.st
        total = int(count.max()) if count.size else 0
        if st.active is not None:
            total = int(count[st.active].max()) if st.active.any() else 0
        self.target = target
        if st.counts is not None:  # tracing: count the longest program's trips
            st.counts.trips += total
        for t in range(total):
            value = values(t)
            if self.outer is not None:  # narrowed: the looping programs' own trip counts and values
                rows, idx = self.outer["root"]
                ends = np.broadcast_to(count, (rows,))[idx] <= t
                value = narrowing.take(value, idx, rows)
            else:
                ends = count <= t
            self.ending = ends if ends.any() else None
            if self.ending is not None:
                self.sync = True
            self.prev_target = value
            yield value

    # -- trip boundaries -----------------------------------------------------------------
    def head(self, vals):
        """Top of a trip (after the for target is assigned): parked programs come back with
        their values, programs whose trip count ended leave; spin detection."""
        st = self.st
        while st.contexts and st.contexts[-1] is not self:  # branches left by a real continue
            st.contexts.pop()
        if self.parked is not None:  # (a for loop's target is already the new trip's for them too)
            target = self.target
            merged = merge(self.parked, self.names, self.cont_vals, vals)
            vals = tuple(v if n == target else m for n, m, v in zip(self.names, merged, vals))
            self.parked, self.cont_vals = None, None
        ending = self.ending
        if ending is not None:
            gone = ending if self.running is None else ending & self.running
            if gone.any():
                old = vals
                if self.last_target is not None:
                    old = tuple(self.last_target if n == self.target else v for n, v in zip(self.names, vals))
                self._leave(gone, old)
            self.ending = None
        self.last_target = self.prev_target
        st.active = self.running
        self._check_progress(vals)
        return vals

    def _check_progress(self, vals):
        """A trip that starts exactly as the last one did, with no memory written in between,
        repeats forever: the programs still looping wait for parked ones."""
        st = self.st
        if not self.is_while:
            return  # a for loop always progresses
        running = self.running
        snap = (vals, st.writes, None if running is None else running.copy())
        prev, self.watch = self.watch, snap
        if prev is None or prev[1] != st.writes:
            return
        if (prev[2] is None) != (running is None) or (running is not None and not (prev[2] == running).all()):
            return
        for a, b in zip(prev[0], vals):
            if a is b:
                continue
            if isinstance(a, tensor) and isinstance(b, tensor) and a.lazy is None and b.lazy is None \
                    and a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.v, b.v):
                continue
            if not isinstance(a, tensor) and not isinstance(b, tensor) and type(a) is type(b) and a == b:
                continue
            return
        wait = context.LOCAL.__dict__.get("on_stall")
        if wait is not None and st.rows == 1:   # a program in a thread of its own: let the others run
            wait(self.line)
            return
        if st.rows == 1:
            raise Stalled(f"the loop at line {self.line} repeats its trips with the same values and no memory "
                          f"written: run alone, this program would never end")
        raise Stalled("a divergent loop makes no progress: its programs wait for programs parked after it",
                      through=0 if self.left is None else int(self.left.sum()))

    def brk(self, vals):
        """`break` by the active programs; True when the loop has no program left."""
        st = self.st
        now = _active_rows(st)
        running = np.ones(st.rows, bool) if self.running is None else self.running
        if not self.sync and self.parked is None and (running == now).all():
            return True  # everyone breaks together
        self.sync = True
        self._leave(now, vals)
        _jump(st, self, now)
        return not (self.running.any() or (self.parked is not None and self.parked.any()))

    def cont(self, vals):
        """`continue` by the active programs; True when nobody is left in this trip."""
        st = self.st
        now = _active_rows(st)
        running = np.ones(st.rows, bool) if self.running is None else self.running
        if not self.sync and self.parked is None and (running == now).all():
            return True  # everyone continues together
        self.sync = True
        self.cont_vals = vals if self.parked is None else merge(now, self.names, vals, self.cont_vals)
        self.parked = now.copy() if self.parked is None else self.parked | now
        _jump(st, self, now)
        running = np.ones(st.rows, bool) if self.running is None else self.running
        return not (running & ~self.parked).any()

    def close(self, vals=None):
        """After the loop: every program has the values it left with."""
        st = self.st
        while st.contexts and st.contexts.pop() is not self:
            pass
        st.active = self.saved
        if vals is None:
            return None
        if self.parked is not None:
            vals = merge(self.parked, self.names, self.cont_vals, vals)
        if self.left is not None:
            vals = self.exit_vals.over(self.left, vals)
        if self.outer is not None:
            vals = self.close(self._widen(vals))
        return vals


# ---------------------------------------------------------------- expressions
def ifexp(cond, then, orelse):
    """`a if cond else b`: one side when every program agrees, else both, merged."""
    if not isinstance(cond, tensor):
        return then() if cond else orelse()
    b = Branch(cond)
    if not b.split:
        return then() if b.then else orelse()
    a = then()
    b.otherwise(("value",), (a,))
    c = orelse()
    return b.merge((c,))[0]


def and_(a, b):
    """`a and b`: Python's for Python values, elementwise for blocks (as Triton's logical_and)."""
    if not isinstance(a, tensor):
        return b() if a else a
    return logical_and(a, b())


def or_(a, b):
    if not isinstance(a, tensor):
        return a if a else b()
    return logical_or(a, b())


def not_(a):
    if not isinstance(a, tensor):
        return not a
    return logical_not(a)


def assert_(cond, msg=""):
    """`assert` in a kernel: a device assert, of a Python value too, as Triton's front end makes it
    (so checked in debug mode only; a check at compile time is `tl.static_assert`)."""
    return device_assert(cond if isinstance(cond, tensor) else to_tensor(bool(cond)), msg)


def literal(x):
    """A number used as an object (`(1).to(tl.float32)`): a tensor, as Triton's constexpr promotion makes it."""
    return to_tensor(x)


def literal_if_number(x):
    """A variable used as an object: a tensor if it holds a Python number (`acc = 0; acc.dtype`)."""
    return to_tensor(x) if type(x) in (int, float, bool) else x


def constexpr_if_value(x):
    """A variable annotated `y: tl.constexpr` used as an object: a constexpr (`y.type` is its
    constexpr_type), as Triton's front end keeps it."""
    return x if isinstance(x, (tensor, constexpr)) else constexpr(x)


def discarded(value, call: str):
    """An expression statement whose call may be `advance`, its result thrown away: refused
    when that result is a block pointer, as Triton's front end refuses a call marked
    must_use_result (tl.advance moves nothing in place; the kernel would load the same block
    every iteration).  Anything else (an aggregate's own `advance`) passes."""
    if isinstance(value, block_pointer):
        raise CompilationError(f"The result of {call} is not being used. Note that tl.advance does not have any "
                               f"side effects. To move the block pointer, you need to assign the result of "
                               f"tl.advance to a variable.")
    return value
