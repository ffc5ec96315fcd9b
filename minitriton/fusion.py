"""K loops of dots run as one step.

The loop every matmul-like kernel spends its time in

    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)            # or: acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

does no arithmetic of its own: tl.dot is already deferred (dot.py keeps one chain of K steps
and multiplies once).  What it costs in an interpreter is the trips: a dozen Python-level
operations each.  When each trip's tiles continue the last one's along K (the pointer steps by
the tile's own extent) and no mask switches a lane off, the trips together load one tile
BLOCK_K x trips wide: this module loads that and makes one dot of it, the product the chain of
the separate trips would have computed (the same BLAS call, so the same bits).

Lowering (lowering.py) recognises such loops in the syntax tree (`plan`) and puts a call to
`dot_loop` before them; at run time it fuses the leading trips whose masks are all true and
hands the rest (usually none: a ragged K tail) to the ordinary loop.  Anything it cannot prove
equivalent, it leaves to the ordinary loop: bounds that differ between programs, steps that do
not tile K, pointers that are not affine, tracing (whose counts must see every trip).
"""
from __future__ import annotations

import ast
import contextlib
import itertools
from dataclasses import dataclass, field

import numpy as np

from . import context, language
from .hoisting import reads
from .dot import dot
from .memory import load
from .affine import uniform_int
from .arithmetic import binary
from .ranges import Range, StaticRange
from .tensor import Divergent, MemoryPressure, tensor

PREFIX = "__mt_fuse"
_LOAD_KEYWORDS = {"mask", "other", "cache_modifier", "eviction_policy", "volatile"}
_enabled = True


@contextlib.contextmanager
def disabled():
    """Within this block, every loop runs trip by trip (to check that fusing changes no bit)."""
    global _enabled
    prev, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = prev


# ---------------------------------------------------------------- recognising the loop
@dataclass
class _Plan:
    target: str                                  # the loop variable ("_" included)
    loads: list = field(default_factory=list)    # (pointer expr, mask expr or None)
    dots: list = field(default_factory=list)     # (load a, load b, accumulator, "acc" | "add", keywords)
    steps: list = field(default_factory=list)    # (carried name, invariant step expr)
    derived: list = field(default_factory=list)  # statements computing per-trip values for masks/pointers


class _Recogniser:
    def __init__(self, resolve, is_local, pure, reads_outside):
        self.resolve, self.is_local, self.pure, self.reads_outside = resolve, is_local, pure, reads_outside

    def is_call(self, e, fn) -> bool:
        return isinstance(e, ast.Call) and self.resolve(e.func) is fn

    def plan(self, loop: ast.For) -> _Plan | None:
        if loop.orelse or not isinstance(loop.target, ast.Name) or not isinstance(loop.iter, ast.Call):
            return None
        f = loop.iter.func
        builtin_range = isinstance(f, ast.Name) and f.id == "range" and self.resolve(f) is None \
            and not self.is_local(f.id)   # Python's range inside a kernel is tl.range (jit.py)
        if not builtin_range and self.resolve(f) not in (Range, StaticRange, language.range):
            return None
        p = _Plan(loop.target.id)
        bound = {p.target}
        named = {}                                 # load-result name -> load index
        for s in loop.body:
            if not self._statement(s, p, named, bound):
                return None
        if not p.dots:
            return None
        carried, accs = [n for n, _ in p.steps], [d[2] for d in p.dots]
        used = {x for d in p.dots for x in (d[0], d[1])}
        if not set(named.values()) <= used or len(set(accs)) != len(accs) or len(set(carried)) != len(carried) \
                or set(carried) & set(accs) or bound & (set(carried) | set(accs)):
            return None
        # steps and dot options are evaluated once, before the loop: they read nothing it changes
        changed = bound | set(carried) | set(accs)
        once = [v for _, v in p.steps] + [k.value for d in p.dots for k in d[4]]
        if any(isinstance(x, ast.Name) and x.id in changed for e in once for x in ast.walk(e)):
            return None
        # every other name the loop binds lives only in it
        if any(self.reads_outside(n, loop) for n in bound):
            return None
        # an accumulator is read only by its dot; a carried pointer by its step and per-trip values
        for name in accs:
            if _count_reads(loop.body, name) != 1:
                return None
        for name in carried:
            if _count_reads(loop.body, name) != 1 + _reads_per_trip(p, name):
                return None
        return p

    def _statement(self, s, p, named, bound) -> bool:
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and isinstance(s.op, ast.Add):
            name, value = s.target.id, s.value
            if self.is_call(value, language.dot):
                return self._dot(value, name, "add", p, named)
            return self._step(name, value, p, bound)
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)):
            return False
        name, value = s.targets[0].id, s.value
        if p.steps:                                 # steps come last: loads see the trip's own pointers
            return isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) \
                and isinstance(value.left, ast.Name) and value.left.id == name \
                and self._step(name, value.right, p, bound)
        if self.is_call(value, language.load):
            if name in bound:
                return False
            i = self._load(value, p, bound)
            if i is None:
                return False
            named[name] = i
            bound.add(name)
            return True
        if self.is_call(value, language.dot):
            acc = self._acc_argument(value)
            return acc == name and self._dot(value, name, "acc", p, named)
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            for x, y in ((value.left, value.right), (value.right, value.left)):
                if isinstance(x, ast.Name) and x.id == name and self.is_call(y, language.dot):
                    return self._dot(y, name, "add", p, named)
            if isinstance(value.left, ast.Name) and value.left.id == name:
                return self._step(name, value.right, p, bound)
        if name in bound or p.loads or not self.pure(value):
            return False                            # derived values come first and are pure
        p.derived.append(s)
        bound.add(name)
        return True

    def _step(self, name, value, p, bound) -> bool:
        if name in bound or not self.pure(value):
            return False
        p.steps.append((name, value))
        return True

    def _load(self, call, p, bound):
        if len(call.args) != 1 or any(k.arg not in _LOAD_KEYWORDS for k in call.keywords):
            return None
        kw = {k.arg: k.value for k in call.keywords}
        if "other" in kw and not self.pure(kw["other"]):
            return None
        p.loads.append((call.args[0], kw.get("mask"), kw.get("other")))
        return len(p.loads) - 1

    def _pure_choice(self, e) -> bool:
        """Pure, or a choice between pure values (`tl.float16 if HALF else tl.float32`)."""
        if isinstance(e, ast.IfExp):
            return all(self._pure_choice(x) for x in (e.test, e.body, e.orelse))
        return self.pure(e)

    @staticmethod
    def _acc_argument(call):
        if len(call.args) >= 3 and isinstance(call.args[2], ast.Name):
            return call.args[2].id
        for k in call.keywords:
            if k.arg == "acc" and isinstance(k.value, ast.Name):
                return k.value.id
        return None

    def _dot(self, call, acc, form, p, named) -> bool:
        if p.steps or len(call.args) < 2 or any(k.arg is None for k in call.keywords):
            return False
        extra = call.args[3:] if form == "acc" else call.args[2:]
        if extra or (form == "add" and self._acc_argument(call) is not None):
            return False
        keywords = [k for k in call.keywords if k.arg != "acc"]
        if any(not self._pure_choice(k.value) for k in keywords):
            return False
        operands = []
        for e in call.args[:2]:
            if isinstance(e, ast.Name) and e.id in named:
                operands.append(named[e.id])
            elif self.is_call(e, language.load):
                i = self._load(e, p, set())
                if i is None:
                    return False
                operands.append(i)
            else:
                return False
        p.dots.append((operands[0], operands[1], acc, form, keywords))
        return True


def _count_reads(stmts, name) -> int:
    return sum(reads(s, name) for s in stmts)


def _reads_per_trip(p: _Plan, name) -> int:
    """Reads of `name` by the loads' pointers and masks and the derived values (the trip function's)."""
    exprs = [e for load in p.loads for e in load if e is not None] + [s.value for s in p.derived]
    return sum(1 for e in exprs for x in ast.walk(e) if isinstance(x, ast.Name) and x.id == name)


# ---------------------------------------------------------------- the statements put before it
_ids = itertools.count()


def prelude(loop: ast.For, p: _Plan, helper: str) -> list[ast.stmt]:
    """Statements that evaluate the loop's range once, try the fused form, and leave the loop
    to iterate what is left (`loop.iter` is replaced by the range's name)."""
    i = next(_ids)
    rng, trip, res = f"{PREFIX}_range{i}", f"{PREFIX}_trip{i}", f"{PREFIX}_result{i}"
    carried = [n for n, _ in p.steps]
    name = lambda n, ctx=ast.Load: ast.Name(n, ctx())  # noqa: E731
    tup = lambda xs, ctx=ast.Load: ast.Tuple(elts=list(xs), ctx=ctx())  # noqa: E731
    plain = [carried.index(e.id) if isinstance(e, ast.Name) and e.id in carried and m is None else None
             for e, m, _ in p.loads]
    needs_trip = bool(p.derived) or any(x is None for x in plain)
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p.target)] + [ast.arg(n) for n in carried], vararg=None,
                         kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    trip_fn = ast.FunctionDef(name=trip, args=args, body=[
        *[ast.Assign(targets=s.targets, value=s.value) for s in p.derived],
        ast.Return(tup(tup([x if x is not None else ast.Constant(None) for x in load]) for load in p.loads))],
        decorator_list=[], returns=None, type_params=[])
    dots = tup(tup([ast.Constant(a), ast.Constant(b), ast.Constant(acc), ast.Constant(form),
                    ast.Dict(keys=[ast.Constant(k.arg) for k in kws], values=[k.value for k in kws])])
               for a, b, acc, form, kws in p.dots)
    accs = [d[2] for d in p.dots]
    call = ast.Call(func=ast.Attribute(name(helper), "dot_loop", ast.Load()), args=[
        name(rng), name(trip) if needs_trip else ast.Constant(None), tup(name(n) for n in carried),
        tup(v for _, v in p.steps), tup(name(a) for a in accs), tup(ast.Constant(x) for x in plain), dots],
        keywords=[])
    out = [ast.Assign(targets=[name(rng, ast.Store)], value=loop.iter)]
    if needs_trip:
        out.append(trip_fn)
    out += [ast.Assign(targets=[name(res, ast.Store)], value=call),
            ast.If(test=ast.Compare(name(res), [ast.IsNot()], [ast.Constant(None)]), body=[
                ast.Assign(targets=[tup([name(n, ast.Store) for n in carried + accs + [rng]], ast.Store)],
                           value=name(res))], orelse=[])]
    for s in out:
        ast.copy_location(s, loop)
    loop.iter = name(rng)
    return out


# ---------------------------------------------------------------- run time
def dot_loop(rng, trip, carried, steps, accs, plain, dots):
    """The fused trips' results: (carried values, accumulators, the range left), or None to
    run the loop as written.  `trip(k, *carried)` gives each load's (pointer, mask, other) in
    trip k (None when every load reads a carried pointer unmasked: then no trip needs evaluating)."""
    st = context.LOCAL.__dict__.get("state")
    if not _enabled or st is None or st.counts is not None or not isinstance(rng, Range) \
            or rng.per_program(st) is not None:
        return None
    r = rng._r
    incs = [uniform_int(s) for s in steps]
    if len(r) < 2 or any(i is None for i in incs) or not all(_affine_pointer(p) for p in carried):
        return None
    k_axes = {}
    for a, b, *_ in dots:         # the axis each load's tiles continue along: A's last, B's first
        k_axes[a] = -1 if k_axes.get(a, -1) == -1 else None
        k_axes[b] = -2 if k_axes.get(b, -2) == -2 else None
    if trip is None:
        n, first, delta = len(r), [carried[x] for x in plain], [incs[x] for x in plain]
        masks = [None] * len(plain)
    else:
        n, first, delta, masks = _fusable_trips(r, trip, carried, incs, k_axes)
        if n < 2:
            return None
    if any(abs(i * n) >= 2 ** 31 for i in incs):
        return None
    results = []
    for (a, b, _, form, kw), acc in zip(dots, accs):
        pa, pb = _extended(first[a], delta[a], -1, n), _extended(first[b], delta[b], -2, n)
        if pa is None or pb is None:
            return None
        try:
            xa, xb = (load(p) if m is None else load(p, mask=m[0], other=m[1])
                      for p, m in ((pa, masks[a]), (pb, masks[b])))
            d = dot(xa, xb, acc, **kw) if form == "acc" else dot(xa, xb, **kw)
        except (Divergent, MemoryPressure):
            raise
        except Exception:   # a tile out of bounds, operands tl.dot refuses: the loop as written says which trip
            return None
        if form == "acc":
            results.append(d)
            continue
        if not (isinstance(acc, tensor) and acc.buf is None and acc.dtype is d.dtype and acc.shape == d.shape):
            return None      # `acc += dot` into a narrower accumulator rounds every trip
        results.append(binary(acc, d, "add"))
    moved = [binary(p, i * n, "add") for p, i in zip(carried, incs)]
    st.fused += n
    rest = Range(r.start + n * r.step, r.stop, r.step)
    return (*moved, *results, rest)


def _affine_pointer(p) -> bool:
    """A pointer block whose tiles a fused loop can extend: affine, or runs (affine.runs_of)."""
    return isinstance(p, tensor) and p.buf is not None and (p.aff is not None or p.runs is not None)


def _fusable_trips(r, trip, carried, incs, k_axes):
    """(how many leading trips load tiles that step uniformly under the same masks, the first
    trip's pointers, their step, each load's mask for the fused trips).  A mask may keep some
    rows of a tile and not others (a matmul's edge tile) if every fused trip has the same one
    and it is the same along K (fused_mask); the trip where K's own mask starts cutting (the
    ragged tail) is left to the loop."""
    first = delta = masks = None
    for t, k in enumerate(r):
        try:
            now = [p if t == 0 else binary(p, i * t, "add") for p, i in zip(carried, incs)]
            got = trip(k, *now)
        except (Divergent, MemoryPressure):
            raise
        except Exception:   # the loop as written raises it at this trip
            return t, first, delta, masks
        if not all(_affine_pointer(p) for p, _, _ in got):
            return t, first, delta, masks
        if t == 0:
            masks = [fused_mask(m, o, k_axes.get(i)) for i, (_, m, o) in enumerate(got)]
            if any(x is False for x in masks):
                return 0, first, delta, masks
        elif not all(_all_true(m) if f is None else _same_mask(m, o, f) for (_, m, o), f in zip(got, masks)):
            return t, first, delta, masks
        ptrs = [p for p, _, _ in got]
        if t == 0:
            first = ptrs
        elif t == 1:
            delta = [_uniform_step(p0, p1) for p0, p1 in zip(first, ptrs)]
            if any(d is None for d in delta):
                return 1, first, delta, masks
        elif any(_uniform_step(p0, p) != d * t for p0, p, d in zip(first, ptrs, delta)):
            return t, first, delta, masks
    return len(r), first, delta, masks


def fused_mask(m, other, axis):
    """A trip's load mask as the mask of the fused trips' load: None when it keeps every lane;
    (the mask with one lane along K, other, its full values) when it is the same along the
    tiles' K axis; False when it cannot be one (it varies along K, or `other` is not one value)."""
    if _all_true(m):
        return None
    if axis is None or not isinstance(m, tensor) or m.buf is not None or not m.dtype.is_bool() \
            or len(m.shape) != 2 or isinstance(other, tensor) and other.rows != 1:
        return False
    v = _compact(m.v)
    ax = axis % 2 + 1
    if v.shape[ax] > 1:
        one = v.take([0], axis=ax)
        if not (v == one).all():
            return False
        v = one
    shape = list(m.shape)
    shape[axis % 2] = 1
    return tensor(np.ascontiguousarray(v), m.dtype, tuple(shape)), other, (_compact(m.v), m.box, m.shape)


def _compact(v: np.ndarray) -> np.ndarray:
    """v with each broadcast axis (stride 0) cut to one element: the same values, compared in
    fewer steps."""
    return v[tuple(slice(0, 1) if s == 0 and n > 1 else slice(None) for s, n in zip(v.strides, v.shape))]


def _same_mask(m, other, fused) -> bool:
    """Whether a later trip's mask and other are the first trip's (fused_mask)."""
    _, first_other, (values, box, shape) = fused
    if not isinstance(m, tensor) or m.buf is not None or other is not first_other and not \
            (isinstance(other, (int, float)) and type(other) is type(first_other) and other == first_other):
        return False
    if box is not None and m.box is not None and m.shape == shape:
        # box masks (boxes.py): one box per program is one set of lanes, so the same bounds are
        # the same mask, compared without building either
        try:
            return all(bool((x == y).all()) for x, y in zip(m.box, box))
        except ValueError:      # programs' bounds that do not broadcast: compared by their lanes
            pass
    v = _compact(m.v)
    return v.shape == values.shape and bool((v == values).all())


def _all_true(m) -> bool:
    if m is None:
        return True
    if isinstance(m, tensor):
        if m.box is not None and m._v is None:      # a box mask (boxes.py): whole boxes everywhere
            lo, hi = m.box
            return bool((lo == 0).all() and (hi == np.array(m.shape, np.int64)).all())
        return m.buf is None and m.dtype.is_bool() and bool(np.all(m.v))
    return isinstance(m, (bool, np.bool_)) and bool(m)


def _uniform_step(p0, p1):
    """p1 - p0 when it is one integer for every lane of every program, else None."""
    if p0.buf is not p1.buf or p0.shape != p1.shape:
        return None
    if p0.aff is not None and p1.aff is not None and p0.aff[1] == p1.aff[1]:
        d = p1.aff[0] - p0.aff[0]
    elif p0.aff is None and p1.aff is None and p0.runs[1:] == p1.runs[1:] and p0.runs[0].shape == p1.runs[0].shape:
        d = p1.runs[0] - p0.runs[0]
    else:
        return None
    d = d.reshape(-1)
    return int(d[0]) if d.size and (d == d[0]).all() else None


def _extended(p, delta, axis, n):
    """The pointer block of n consecutive tiles along `axis`, when stepping by `delta` moves a
    tile exactly its own extent along that axis; else None."""
    if p is None or delta is None or len(p.shape) < 2:
        return None
    d = axis % len(p.shape)
    shape = p.shape[:d] + (p.shape[d] * n,) + p.shape[d + 1:]
    if p.aff is None:       # runs along this axis: the same starts, longer runs
        starts, run_axis, step = p.runs
        if run_axis != d or p.shape[d] < 2 or step * p.shape[d] != delta:
            return None
        out = tensor(None, p.dtype, shape, buf=p.buf)
        out.runs = p.runs
        return out
    c, steps = p.aff
    if p.shape[d] < 2 or steps[d] == 0 or steps[d] * p.shape[d] != delta:
        return None
    return tensor(None, p.dtype, shape, aff=(c, steps), buf=p.buf)
