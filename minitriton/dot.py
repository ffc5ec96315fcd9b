"""`tl.dot`: products of blocks, deferred along K.

`acc = tl.dot(a, b, acc)` in a K loop builds a DotChain; the accumulator's value is computed
only when something uses it, as one BLAS call per program over the whole K.
"""
from __future__ import annotations

import builtins
import math
import os

import numpy as np

from . import dtypes as D
from . import context
from .tensor import FROM_ABOVE, broadcast_shape, tensor, to_tensor, round_to, POOL, MemoryPressure
from .arithmetic import binary, constexpr_value
from .casts import cast
from .shapes import trans
from . import expressions
from .expressions import Expression
from .storage import program_view, same_source, one_window

_DOT_TYPES = {D.float16, D.bfloat16, D.float32, D.float64, D.int8, *D.FP8}


def round_to_tf32(v, rounding="rna"):
    """Round float32 to tf32 (10 mantissa bits, the 13 low bits cleared), to nearest with ties
    away ("rna", as A100's tensor cores take fp32 operands) or to even ("rn"); NaN and infinity
    kept."""
    u = np.ascontiguousarray(v, np.float32).view(np.uint32)
    finite = (u & 0x7F800000) != 0x7F800000
    bias = np.uint32(0x1000) if rounding == "rna" else np.uint32(0x0FFF) + ((u >> np.uint32(13)) & np.uint32(1))
    r = np.where(finite, (u + bias) & np.uint32(0xFFFFE000), u)
    return r.view(np.float32)


def _pdims(t: tensor):
    if t.pv is not None:
        return list(t.pv.shape[:t.pv.ndim - len(t.shape)])
    return [t.rows]


def _common_dims(da, db):
    """The coarsest mixed radix that refines both (outermost first), or None."""
    def cuts(d):  # cumulative products from the innermost digit
        out, p = set(), 1
        for x in reversed(d):
            p *= x
            out.add(p)
        return out
    if math.prod(da) != math.prod(db):
        return None
    bounds = sorted(cuts(da) | cuts(db))
    dims, prev = [], 1
    for c in bounds:
        if c % prev:
            return None
        dims.insert(0, c // prev)
        prev = c
    return dims


def _dot_operands(a: tensor, b: tensor):
    """Operands for one batched matmul over programs; shared blocks stay views (no copies).

    Each program still gets its own (BM x BK) @ (BK x BN) product, computed by the same BLAS
    call whether it runs alone or in lockstep with others, so both paths agree bit for bit.
    """
    if a.pv is None and b.pv is None:
        return a.v, b.v
    da, db = _pdims(a), _pdims(b)
    if a.rows == 1 or b.rows == 1:
        common = da if b.rows == 1 else db
    else:
        common = _common_dims(da, db)
    if common is None:
        return a.v, b.v

    def shaped(t):
        if t.rows == 1:
            src = t.pv if t.pv is not None else t.v
            return src.reshape((1,) * len(common) + t.shape)
        src = t.pv if t.pv is not None else t.v
        return src.reshape(tuple(common) + t.shape)
    return shaped(a), shaped(b)


def _matmul(a, b, out=None):
    """np.matmul, telling the elementwise threads that BLAS's workers are spinning now."""
    r = np.matmul(a, b, out=out)
    expressions.blas_returned()
    return r


def _batched_matmul(va, vb, acc):
    """acc + va @ vb for every program, as a flat (programs, m, n) array.

    Programs usually multiply a grid of blocks: the rows of A a program reads depend on some
    program dims and the columns of B on others (operand views broadcast with stride 0 over
    the rest).  Then one GEMM over the distinct blocks gives every program's product at BLAS's
    full speed.  Each output element is still one fp32 sum over K, though BLAS may order it
    otherwise than the program's own call when it runs alone (it does with OpenBLAS's Haswell and
    Zen kernels; tests/test_paths.py holds the two paths to the accumulation bound).  Dims that vary both operands (attention's head) become the GEMM's
    batch; when every varying dim varies both, it is one call per program.
    """
    m, n = va.shape[-2], vb.shape[-1]
    batch = broadcast_shape(va.shape[:-2], vb.shape[:-2])
    flat = POOL.empty((math.prod(batch), m, n), np.result_type(va, vb))
    out = flat.reshape(batch + (m, n))
    if not _grid_matmul(va, vb, batch, out):
        _matmul(va, vb, out=out)
    return flat if acc is None else _add_acc(flat, out, acc)


def _add_acc(flat, out, acc):
    """flat (= out, shaped by the programs' dims) plus the accumulator, one per program or shared."""
    lead = out.shape[:-2]
    np.add(out, acc.reshape(lead + acc.shape[1:]) if acc.shape[0] == flat.shape[0] else
           acc.reshape((1,) * len(lead) + acc.shape[1:]), out=out, casting="unsafe")
    return flat


def _grid_matmul(va, vb, batch, out) -> bool:
    """out = va @ vb as few GEMMs: one per combination of the program dims that vary both
    operands (attention's head), each over the distinct blocks of the dims that vary only one
    (its query blocks as rows); False when no dim varies only one operand (see above)."""
    nd = len(batch)
    if nd == 0 or math.prod(batch) < 2:
        return False
    va = va.reshape((1,) * (nd - (va.ndim - 2)) + va.shape)
    vb = vb.reshape((1,) * (nd - (vb.ndim - 2)) + vb.shape)
    a_dims, b_dims, both = [], [], []
    for d in range(nd):
        a_var = va.shape[d] > 1 and va.strides[d] != 0
        b_var = vb.shape[d] > 1 and vb.strides[d] != 0
        (both if a_var and b_var else a_dims if a_var else b_dims if b_var else []).append(d)
    if not a_dims and not b_dims:
        return False
    m, k, n = va.shape[-2], va.shape[-1], vb.shape[-1]
    sizes = [batch[d] for d in both], [batch[d] for d in a_dims], [batch[d] for d in b_dims]
    a_core = _core(va, both, a_dims).reshape(math.prod(sizes[0]), math.prod(sizes[1]) * m, k)
    b_core = np.moveaxis(_core(vb, both, b_dims), -2, len(both))      # (both, k, b dims, n)
    b_core = b_core.reshape(math.prod(sizes[0]), k, math.prod(sizes[2]) * n)
    grid = _matmul(a_core, b_core).reshape(tuple(sizes[0] + sizes[1]) + (m,) + tuple(sizes[2]) + (n,))
    nb, na = len(both), len(a_dims)
    rows = list(range(nb + na))                       # both, a dims
    cols = list(range(nb + na + 1, grid.ndim - 1))    # b dims
    grid = grid.transpose(rows + cols + [nb + na, grid.ndim - 1])     # (both, a, b, m, n)
    held = both + a_dims + b_dims
    order = sorted(held)
    perm = [held.index(d) for d in order] + [grid.ndim - 2, grid.ndim - 1]
    placed = grid.transpose(perm).reshape(tuple(batch[d] if d in order else 1 for d in range(nd)) + (m, n))
    np.copyto(out, placed, casting="unsafe")
    return True


def _core(v, first, then):
    """v's blocks over the program dims `first` then `then` (the others taken at 0, where v is
    the same for every program), in that order, then its two block dims."""
    nd = v.ndim - 2
    kept = [d for d in range(nd) if d in first or d in then]
    core = v[tuple(slice(None) if d in kept else 0 for d in range(nd))]
    return core.transpose([kept.index(d) for d in first + then] + [len(kept), len(kept) + 1])


def expected_shape(a, b):
    return a.shape[:-1] + b.shape[-1:]


def _concat_k(ts, axis):
    """The K-concatenation of a chain's operand blocks, as one tensor.

    Blocks loaded from consecutive K windows of one array (the usual `ptrs += BLOCK_K * stride`
    loop) concatenate into a single window of the same array, read in place; anything else is
    copied together."""
    if len(ts) == 1 and not _windowed(ts[0]):
        return ts[0]   # (a lone window still becomes a view below when it can: one call for all programs)
    first = ts[0]
    shape = list(first.shape)
    shape[axis] = builtins.sum(t.shape[axis] for t in ts)
    shape = tuple(shape)
    if all(t.win is not None for t in ts) and all(t.shape == first.shape for t in ts):
        src, base, steps = first.win
        width = first.shape[axis] * steps[axis]
        if all(same_source(t.win[0], src) and t.win[2] == steps and t.win[1].shape == base.shape
               and (t.win[1] == base + k * width).all() for k, t in enumerate(ts)):
            view = program_view(src, base, steps, shape)
            if view is not None:
                return tensor.from_view(view, first.dtype, shape)
            t = tensor(None, first.dtype, shape)  # one window per program: read in place by the product
            t.win = (src, base, steps)
            return t
    if all(t.shared is not None and t._v is None for t in ts) and \
            all(np.array_equal(t.shared[1], first.shared[1]) for t in ts[1:]):
        out = tensor(None, first.dtype, shape)  # blocks shared alike by the programs: concatenated once
        out.shared = (np.concatenate([t.shared[0] for t in ts], axis=axis + 1), first.shared[1])
        return out
    rows = builtins.max(t.rows for t in ts)
    parts = [np.broadcast_to(t.v, (rows,) + t.shape) for t in ts]
    return tensor(np.concatenate(parts, axis=axis + 1), first.dtype, shape)


class DotChain:
    """acc0 + a_0 @ b_0 + a_1 @ b_1 + ..., evaluated only when its value is needed.

    `acc = tl.dot(a, b, acc)` in a K loop builds one chain; when the accumulator is finally
    used, every program's product runs as ONE BLAS call over the whole K (operands read in
    place where they are consecutive windows), instead of one small call per K step.  The
    fp32 accumulation order is BLAS's, over all of K; it is the same call for a program
    whether it runs alone or in lockstep, so both execution paths agree bit for bit, and
    the result no longer depends on BLOCK_K.
    """

    __slots__ = ("acc", "terms", "out_dtype", "prec", "rows", "held", "counts", "live")

    def __init__(self, acc, terms, out_dtype, prec, parent=None, counts=None, live=None):
        """`parent`: the chain this one extends by terms[len(parent.terms):].  `counts`: how many
        of the terms each program has (programs that left a loop early have fewer), or None.
        `live`: the programs that were running when some term was added (None: all of them);
        a value computed for a program that is not running is never observed (control flow
        merges keep its old value), so the others' products are skipped."""
        self.acc, self.terms, self.out_dtype, self.prec = acc, terms, out_dtype, prec
        self.counts = counts
        st = context.LOCAL.__dict__.get("state")
        self.live = _union(st.active if st is not None else None, parent.live if parent is not None else live,
                           parent is not None or live is not None)
        new = terms[len(parent.terms):] if parent is not None else terms
        ops_ = [t for pair in new for t in pair]
        self.rows = builtins.max([t.rows for t in ops_] + [parent.rows if parent is not None else 1]
                                 + [acc.rows if acc is not None else 1])
        # bytes of operand copies the chain keeps alive (windows into arguments cost nothing)
        self.held = (parent.held if parent is not None else 0) + \
            builtins.sum(t._v.nbytes if t._v is not None else t.shared[0].nbytes for t in ops_
                         if t.win is None and (t._v is not None or t.shared is not None))

    def extends(self, out_dtype, prec, in_dtype):
        return self.out_dtype is out_dtype and self.prec == prec and self.terms[0][0].dtype is in_dtype \
            and self.counts is None

    def evaluate(self) -> np.ndarray:
        st = context.LOCAL.__dict__.get("state")
        if st is not None and st.counts is not None:  # tracing: the values do not matter
            shape = expected_shape(self.terms[0][0], self.terms[0][1])
            return np.zeros((self.rows,) + shape, self.out_dtype.container)
        if self.counts is not None:
            return self._evaluate_ragged(self.counts)
        if self.live is not None and self.rows > 1 and self.live.shape[0] == self.rows and not self.live.all():
            return self._evaluate_ragged(np.where(self.live, len(self.terms), -1))
        return self._evaluate()

    def _evaluate_ragged(self, counts):
        """Programs with n terms get the chain of the first n terms, as if each ran alone;
        programs counted -1 were never running (their values are never observed)."""
        rows = counts.shape[0]
        out = None
        for n in np.unique(counts):
            sel = np.flatnonzero(counts == n)
            if n < 0:  # never observed: left as they are
                if out is None:
                    shape = expected_shape(self.terms[0][0], self.terms[0][1])
                    out = POOL.empty((rows,) + shape, self.out_dtype.container)
                continue
            if n == 0:
                part = self.acc.v if self.acc is not None else None
                part = np.broadcast_to(part, (rows,) + part.shape[1:])[sel] if part is not None else 0
            else:  # these programs' rows of each term (windows stay windows), then K-concatenated
                a, b = self._operands([(_rows_of(x, sel, rows), _rows_of(y, sel, rows)) for x, y in self.terms[:n]])
                part = self._product(a, b, _rows_of(self.acc, sel, rows))
            if out is None:
                shape = expected_shape(self.terms[0][0], self.terms[0][1])
                out = np.zeros((rows,) + shape, self.out_dtype.container)
            out[sel] = part
        return out

    def _evaluate(self):
        a, b = self._operands(self.terms)
        return self._product(a, b, self.acc)

    @staticmethod
    def _operands(terms):
        return (_concat_k([t[0] for t in terms], axis=len(terms[0][0].shape) - 1),
                _concat_k([t[1] for t in terms], axis=len(terms[0][1].shape) - 2))

    def _product(self, a, b, acc):
        if len(a.shape) == 2 and (_windowed(a) or _windowed(b)):
            return self._finish(_per_program_matmul(a, b, self._prepare), acc)
        if len(a.shape) == 2 and (a.shared is not None and a._v is None or b.shared is not None and b._v is None):
            prod = _shared_matmul(a, b, self._prepare)
            if prod is not None:
                return self._finish(prod, acc)
        va, vb = _dot_operands(a, b)
        va, vb = self._prepare(va), self._prepare(vb)
        if acc is not None and len(a.shape) == 2 and type(acc.lazy) is Expression and \
                acc.lazy.dtype == self.out_dtype.container and not (a.rows == 1 and b.rows == 1):
            # a deferred accumulator (attention's `acc * alpha`) and the product's addition: one pass
            prod = _batched_matmul(va, vb, None)
            total = expressions.combine("add", prod, acc.lazy, prod.dtype, prod.shape) \
                if acc.lazy.full == prod.shape else None
            return self._cast(total.evaluate(out=prod) if total is not None else _add_acc(prod, prod, acc.v))
        av = None
        if acc is not None:
            av = acc.v
            if av.dtype != self.out_dtype.container:
                av = av.astype(self.out_dtype.container)
        if len(a.shape) == 3:  # batched blocks: rare, keep it plain
            prod = _matmul(va, vb).reshape((-1,) + expected_shape(a, b))
            prod = prod + av if av is not None else prod
        elif av is not None and av.shape[0] > 1 and a.rows == 1 and b.rows == 1:
            prod = _batched_matmul(va, vb, None) + av  # a uniform product added to per-program accumulators
        else:
            prod = _batched_matmul(va, vb, av)
        return self._cast(prod)

    def _prepare(self, v):
        """Operand values as the tensor cores see them (tf32-rounded fp32, widened int8)."""
        if self.prec == "tf32":
            return round_to_tf32(v)
        return v.astype(np.int32) if v.dtype == np.int8 else v

    def _finish(self, prod, acc):
        if acc is not None:
            av = acc.v
            np.add(prod, av if av.shape[0] == prod.shape[0] else av.reshape((1,) + av.shape[1:]), out=prod,
                   casting="unsafe")
        return self._cast(prod)

    def _cast(self, prod):
        if prod.dtype != self.out_dtype.container:
            prod = prod.astype(self.out_dtype.container)
        if self.out_dtype.kind == "f" and self.out_dtype.bits <= 16:
            prod = round_to(prod, self.out_dtype)
        return prod


def _windowed(t: tensor) -> bool:
    """A block that is one window per program into an argument, not gathered into an array."""
    return t._v is None and t.pv is None and t.lazy is None and t.win is not None


def _per_program(t: tensor):
    """Program p's block of t, as a view where t is windowed."""
    if _windowed(t):
        src, base, steps = t.win
        return base.shape[0], lambda p: one_window(src, base, steps, t.shape, p)
    v = t.v
    return v.shape[0], lambda p: v[p]


def _per_program_matmul(a, b, prepare):
    """Every program's a @ b, one BLAS call each on its own operand windows read in place: the
    call a program makes when it runs alone, so both execution paths agree bit for bit."""
    ra, pa = _per_program(a)
    rb, pb = _per_program(b)
    rows = builtins.max(ra, rb)
    shared_a, shared_b = prepare(pa(0)) if ra == 1 else None, prepare(pb(0)) if rb == 1 else None
    out = None
    for p in range(rows):
        x = shared_a if ra == 1 else prepare(pa(p))
        y = shared_b if rb == 1 else prepare(pb(p))
        if out is None:
            out = POOL.empty((rows, a.shape[0], b.shape[1]), np.result_type(x, y))
        _matmul(x, y, out=out[p])
    return out


def _blocks(t: tensor):
    """(distinct blocks, which block each program has) of an operand."""
    if t.shared is not None and t._v is None:
        return t.shared
    v = t.v
    return v, np.arange(v.shape[0])


def _shared_matmul(a, b, prepare):
    """Every program's a @ b when programs share operand blocks (tensor.shared): every distinct
    A block against every distinct B block, one GEMM per B block, each program then picking its
    own (as _grid_matmul does for blocks shared along a grid of programs); None when the pairs
    the programs use are too few of all the pairs for that to pay."""
    (ba, wa), (bb, wb) = _blocks(a), _blocks(b)
    rows = builtins.max(wa.shape[0], wb.shape[0])
    if ba.shape[0] * bb.shape[0] > 2 * rows:
        return None
    m, k = a.shape
    left = prepare(ba).reshape(ba.shape[0] * m, k)
    grid = _matmul(left, prepare(bb))        # (B blocks, A blocks * m, n): one GEMM per B block
    grid = grid.reshape(bb.shape[0], ba.shape[0], m, b.shape[1])
    return grid[np.broadcast_to(wb, (rows,)), np.broadcast_to(wa, (rows,))]


def _union(active, other, has_other):
    """Programs live in either mask (None: every program)."""
    if active is None or (has_other and other is None):
        return None
    return active.copy() if not has_other else active | other


def _rows_of(t, sel, rows):
    """The rows `sel` of a tensor (a uniform one stays uniform), as a plain tensor."""
    if t is None:
        return None
    if t.win is not None and t.lazy is None and t.win[1].shape[0] == rows:  # a window per program: stays one
        picked = tensor(None, t.dtype, t.shape)
        src = t.win[0]
        picked.win = (src.subset(sel) if hasattr(src, "subset") else src, t.win[1][sel], t.win[2])
        return picked
    v = t.v
    if v.shape[0] == 1:
        return tensor(v, t.dtype, t.shape)
    picked = np.broadcast_to(v, (rows,) + v.shape[1:])[sel]  # a C-ordered copy
    if v.ndim == 3 and v[0].strides[0] < v[0].strides[1]:
        # column-major blocks stay column-major: BLAS rounds a transposed operand differently
        out = np.empty((len(sel), v.shape[2], v.shape[1]), v.dtype).transpose(0, 2, 1)
        out[...] = picked
        picked = out
    return tensor(picked, t.dtype, t.shape)


def select_chains(mask, x, y):
    """`where(mask, x, y)` of two deferred dot chains, one a prefix of the other (a loop's
    accumulator before and after some trips), without evaluating them: the result is a
    ragged chain whose programs keep their own number of terms, so each still gets one
    product over its whole K, as it would running alone.  None when they are not such a pair."""
    a, b = x.lazy, y.lazy
    if not (isinstance(a, DotChain) and isinstance(b, DotChain)) or x._v is not None or y._v is not None:
        return None
    if a.acc is not b.acc or a.out_dtype is not b.out_dtype or a.prec != b.prec:
        return None
    long_, short = (a, b) if len(a.terms) >= len(b.terms) else (b, a)
    if any(p is not q for p, q in zip(long_.terms, short.terms)):
        return None
    rows = mask.shape[0]
    ca = a.counts if a.counts is not None else np.full(rows, len(a.terms))
    cb = b.counts if b.counts is not None else np.full(rows, len(b.terms))
    chain = DotChain(long_.acc, long_.terms, long_.out_dtype, long_.prec, counts=np.where(mask, ca, cb))
    chain.rows = rows
    return tensor.deferred(chain, x.dtype, x.shape)


PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")
# fp32 products on bf16 tensor cores (Henry et al., arXiv:1904.06376, as Triton and XLA emit
# them): each operand split into 2 or 3 bf16 parts, then these (a part, b part) products summed
# smallest first, before the leading parts' product; the pairs whose product is too small to
# matter are left out
_BF16_SPLITS = {"bf16x3": (2, ((1, 0), (0, 1))), "bf16x6": (3, ((1, 1), (2, 0), (0, 2), (1, 0), (0, 1)))}


def _precision(a, input_precision, allow_tf32):
    if a.dtype is not D.float32:
        return None
    if allow_tf32 is not None and input_precision is None:
        input_precision = "tf32" if allow_tf32 else "ieee"
    prec = input_precision or os.environ.get("MINITRITON_F32_DEFAULT", "tf32")
    if prec not in PRECISIONS:
        raise ValueError(f"input_precision must be one of {', '.join(map(repr, PRECISIONS))}, got {prec!r}")
    return prec


def _bf16_parts(v, n) -> list:
    """float32 values as n bfloat16 values (held in float32) that add up to them: the leading
    ones cut to bfloat16 (the low 16 bits dropped), the last rounded to nearest."""
    rest, parts = np.ascontiguousarray(v, np.float32), []
    for _ in range(n - 1):
        high = (rest.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
        parts.append(high)
        rest = rest - high
    return parts + [round_to(rest, D.bfloat16)]


def _split_dot(a, b, acc, prec, out_dtype):
    """tl.dot of fp32 blocks with input_precision "bf16x3" or "bf16x6": exact bf16 products
    accumulated in fp32, as _BF16_SPLITS says.  A non-finite sum of the small products is
    dropped before the leading one is added (1.0 = 1.0 + 0.0 times infinity would be NaN)."""
    n, pairs = _BF16_SPLITS[prec]
    pa, pb = _bf16_parts(a.v, n), _bf16_parts(b.v, n)
    part_a, part_b = (lambda p: tensor(p, D.float32, a.shape)), (lambda p: tensor(p, D.float32, b.shape))
    small = None
    for i, j in pairs:
        small = dot(part_a(pa[i]), part_b(pb[j]), small, input_precision="ieee")
    v = small.v
    small = tensor(np.where(np.abs(v) < np.inf, v, np.float32(0)), D.float32, small.shape)
    out = dot(part_a(pa[0]), part_b(pb[0]), small, input_precision="ieee")
    if acc is not None:
        out = binary(to_tensor(acc), out, "add")
    return out if out.dtype is out_dtype else cast(out, out_dtype)


def dot(input, other, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None,
        out_dtype=D.float32, *, trans_a=False, trans_b=False):
    """`trans_a` / `trans_b`: Triton 2.0's way of taking an operand transposed (`tl.dot(q, k,
    trans_b=True)` in kernels of that time, FlashAttention's first Triton version among them),
    which Triton 2.1 replaced by `tl.trans`; the same as transposing the operand first."""
    a, b = to_tensor(input), to_tensor(other)
    if constexpr_value(trans_a):
        a = trans(a)
    if constexpr_value(trans_b):
        b = trans(b)
    if len(a.shape) not in (2, 3) or len(b.shape) != len(a.shape):
        raise ValueError(f"tl.dot needs two 2-D (or two 3-D) blocks, got shapes {list(a.shape)} and {list(b.shape)}")
    if a.shape[-1] != b.shape[-2] or a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"tl.dot shape mismatch: {list(a.shape)} @ {list(b.shape)} (inner dimensions must agree)")
    # (no minimum size: Triton's interpreter, and AMD's backend, take any; NVIDIA's wants 16)
    if a.dtype is not b.dtype and not (a.dtype.is_fp8() and b.dtype.is_fp8()):
        raise TypeError(f"tl.dot operands must have the same dtype, got {a.dtype} and {b.dtype}")
    if a.dtype not in _DOT_TYPES:
        raise TypeError(f"tl.dot supports fp8, fp16, bf16, fp32, fp64 and int8 inputs, got {a.dtype}")
    imprecise = constexpr_value(max_num_imprecise_acc)
    if imprecise is not None and a.dtype.is_fp8() and imprecise > a.shape[-1]:
        # (a GPU's fp8 MMA sums that many products before promoting to fp32: here every sum is fp32)
        raise ValueError(f"max_num_imprecise_acc ({imprecise}) must be <= K ({a.shape[-1]})")
    out_dtype = constexpr_value(out_dtype)
    if a.dtype is D.int8:
        out_dtype = D.int32
    elif a.dtype is D.float64:
        out_dtype = D.float64
    prec = _precision(a, input_precision, allow_tf32)
    if prec in _BF16_SPLITS:
        return _split_dot(a, b, acc, prec, out_dtype)
    shape = expected_shape(a, b)
    st = context.LOCAL.__dict__.get("state")
    if st is not None and st.counts is not None:
        cnt = st.counts
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        cnt.tc_flops += 2.0 * m * n * k * math.prod(a.shape[:-2])
        cnt.dots += 1
        cnt.tile, cnt.tile_itemsize = (m, n, k), a.dtype.np.itemsize
    if acc is not None:
        acc = to_tensor(acc)
        if acc.shape != shape:
            raise ValueError(f"tl.dot acc has shape {list(acc.shape)}, expected {list(shape)}")
        chain = acc.lazy
        if isinstance(chain, DotChain) and acc._v is None and chain.extends(out_dtype, prec, a.dtype):
            return _chained(DotChain(chain.acc, chain.terms + [(a, b)], out_dtype, prec, chain), out_dtype, shape)
    return _chained(DotChain(acc, [(a, b)], out_dtype, prec), out_dtype, shape)


CHAIN_COPY_BYTES = 256 << 20


def _chained(chain, out_dtype, shape):
    """A deferred dot.  A chain keeps its operands alive until it is evaluated; operands that
    are not windows into an argument are copies, and if those outgrow CHAIN_COPY_BYTES the
    launch is asked to run fewer programs at a time (which changes no program's result)."""
    if chain.rows > 1 and chain.held > CHAIN_COPY_BYTES:
        raise MemoryPressure(f"{chain.held >> 20} MB of dot operands held in lockstep")
    return tensor.deferred(chain, out_dtype, shape)


def fuse_accumulate(x, y):
    """`acc + tl.dot(a, b)`: the same chain as `tl.dot(a, b, acc)` (Triton's older tutorials
    accumulate this way); None when the operands are not of that form."""
    for acc, d in ((x, y), (y, x)):
        if isinstance(d, tensor) and isinstance(d.lazy, DotChain) and d._v is None and d.lazy.acc is None \
                and isinstance(acc, tensor) and acc.buf is None and acc.dtype is d.dtype and acc.shape == d.shape:
            chain = acc.lazy
            if isinstance(chain, DotChain) and acc._v is None and chain.extends(d.lazy.out_dtype, d.lazy.prec,
                                                                       d.lazy.terms[0][0].dtype):
                fused = DotChain(chain.acc, chain.terms + d.lazy.terms, d.dtype, d.lazy.prec, chain)
                fused.live = _union(fused.live, d.lazy.live, True)
                return _chained(fused, d.dtype, d.shape)
            return tensor.deferred(DotChain(acc, d.lazy.terms, d.dtype, d.lazy.prec, live=d.lazy.live), d.dtype,
                                   d.shape)
    return None


FROM_ABOVE["fuse_accumulate"] = fuse_accumulate   # for arithmetic.binary's add
