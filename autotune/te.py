"""A small tensor-expression language (in the style of TVM's `te`): say what is computed, and
`te.generate` writes the minitriton kernels (lecture §5.1-5.3: nobody writes the template).

    M, N, K = te.var("M"), te.var("N"), te.var("K")
    A = te.placeholder((M, K), "float16", name="A")
    B = te.placeholder((K, N), "float16", name="B")
    k = te.reduce_axis(K, name="k")
    C = te.compute((M, N), lambda m, n: te.sum(A[m, k] * B[k, n], axis=k), name="C")
    op = te.generate(C)

Inputs are placeholders with shapes (sizes are `te.var`s or ints) and dtypes; an output is an
index expression over inputs and earlier outputs; reductions (`te.sum`, `te.max`) run over
named `te.reduce_axis`es; element-wise consumers (`+ bias[n]`, `te.relu`, `te.gelu`, scaling,
`te.cast`) follow.  Reductions accumulate in float32 and the output takes the compute's
`dtype` (by default its inputs' type).  What the generator cannot turn into kernels it refuses
by name (autotune/codegen/), never with a wrong kernel.
"""
from __future__ import annotations

import itertools

_ids = itertools.count()
DTYPES = ("float16", "bfloat16", "float32")


class Expr:
    """A node of an index or value expression."""

    def _wrap(self, other):
        return other if isinstance(other, Expr) else Const(other)

    def __add__(self, o):
        return Binary("+", self, self._wrap(o))

    def __radd__(self, o):
        return Binary("+", self._wrap(o), self)

    def __sub__(self, o):
        return Binary("-", self, self._wrap(o))

    def __rsub__(self, o):
        return Binary("-", self._wrap(o), self)

    def __mul__(self, o):
        return Binary("*", self, self._wrap(o))

    def __rmul__(self, o):
        return Binary("*", self._wrap(o), self)

    def __truediv__(self, o):
        return Binary("/", self, self._wrap(o))

    def __neg__(self):
        return Binary("*", Const(-1), self)

    def __floordiv__(self, o):
        return Binary("//", self, self._wrap(o))

    def __rfloordiv__(self, o):
        return Binary("//", self._wrap(o), self)

    # comparisons make conditions (for te.if_then_else); a te expression is never a Python bool
    def __lt__(self, o):
        return Compare("<", self, self._wrap(o))

    def __le__(self, o):
        return Compare("<=", self, self._wrap(o))

    def __gt__(self, o):
        return Compare("<", self._wrap(o), self)

    def __ge__(self, o):
        return Compare("<=", self._wrap(o), self)

    __hash__ = object.__hash__


class Const(Expr):
    def __init__(self, value):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise TypeError(f"te: {value!r} is not a number, a te.var or an expression")
        self.value = value

    def __repr__(self):
        return repr(self.value)


class Var(Expr):
    """A size (te.var) or an index variable of a compute's output."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"te.var: name must be an identifier, got {name!r}")
        self.name = name

    def __repr__(self):
        return self.name


class ReduceAxis(Var):
    def __init__(self, extent, name: str):
        super().__init__(name)
        self.extent = _size(extent, f"te.reduce_axis({name!r})")


class Binary(Expr):
    def __init__(self, op, a, b):
        self.op, self.a, self.b = op, a, b

    def __repr__(self):
        return f"({self.a} {self.op} {self.b})"


class Compare(Expr):
    def __init__(self, op, a, b):
        self.op, self.a, self.b = op, a, b

    def __repr__(self):
        return f"({self.a} {self.op} {self.b})"

    def __bool__(self):
        raise TypeError(f"te: {self!r} is a condition of the computation, not a Python bool; use te.all / "
                        f"te.if_then_else")


class All(Expr):
    def __init__(self, conds):
        self.conds = tuple(conds)

    def __repr__(self):
        return "all(" + ", ".join(map(repr, self.conds)) + ")"


class IfThenElse(Expr):
    def __init__(self, cond, then, otherwise):
        self.cond, self.then, self.otherwise = cond, then, otherwise

    def __repr__(self):
        return f"if_then_else({self.cond}, {self.then}, {self.otherwise})"


class Call(Expr):
    """An element-wise function of one value: relu, gelu, exp, cast."""

    def __init__(self, fn, arg, dtype=None):
        self.fn, self.arg, self.dtype = fn, arg, dtype

    def __repr__(self):
        return f"{self.fn}({self.arg}{', ' + self.dtype if self.dtype else ''})"


class Reduce(Expr):
    def __init__(self, kind, body, axes):
        axes = tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)
        for a in axes:
            if not isinstance(a, ReduceAxis):
                raise TypeError(f"te.{kind}: axis must be a te.reduce_axis, got {a!r}")
        self.kind, self.body, self.axes = kind, _expr(body, f"te.{kind}"), axes

    def __repr__(self):
        return f"{self.kind}({self.body}, axis={list(self.axes)})"


class Access(Expr):
    def __init__(self, tensor, index):
        self.tensor, self.index = tensor, index

    def __repr__(self):
        return f"{self.tensor.name}[{', '.join(map(repr, self.index))}]"


class Tensor:
    def __init__(self, shape, dtype, name):
        if dtype not in DTYPES:
            raise ValueError(f"te: {name}: dtype must be one of {DTYPES}, got {dtype!r}")
        if not isinstance(shape, (tuple, list)) or not shape:
            raise ValueError(f"te: {name}: shape must be a non-empty tuple of sizes, got {shape!r}")
        self.shape = tuple(_size(s, f"te: {name}'s shape") for s in shape)
        self.dtype, self.name = dtype, name

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        if len(index) != len(self.shape):
            raise IndexError(f"te: {self.name} has {len(self.shape)} dimensions, indexed with {len(index)}")
        return Access(self, tuple(_expr(i, f"te: an index of {self.name}") for i in index))

    def __repr__(self):
        return f"{type(self).__name__}({self.name}: {list(self.shape)}, {self.dtype})"


class Placeholder(Tensor):
    pass


class Compute(Tensor):
    def __init__(self, shape, fcompute, name, dtype=None):
        shape = tuple(shape)
        code = getattr(fcompute, "__code__", None)
        given = code.co_varnames[:code.co_argcount] if code is not None else ()
        names = [given[d] if d < len(given) else f"i{d}" for d in range(len(shape))]
        self.axes = tuple(Var(n) for n in names)
        body = _expr(fcompute(*self.axes), f"te.compute({name!r})")
        if dtype is None:
            dtype = _dtype_of(body) or "float32"
        super().__init__(shape, dtype, name)
        self.body = body


def var(name: str) -> Var:
    return Var(name)


def placeholder(shape, dtype="float32", name=None) -> Placeholder:
    return Placeholder(shape, dtype, name or f"input{next(_ids)}")


def reduce_axis(extent, name=None) -> ReduceAxis:
    return ReduceAxis(extent, name or f"r{next(_ids)}")


def compute(shape, fcompute, name=None, dtype=None) -> Compute:
    """An output of `shape` whose element at (i, j, ...) is fcompute(i, j, ...)."""
    if not callable(fcompute):
        raise TypeError(f"te.compute: fcompute must be a function of the output's indices, got {fcompute!r}")
    return Compute(shape, fcompute, name or f"T{next(_ids)}", dtype)


def sum(body, axis) -> Reduce:  # noqa: A001 - te's name
    return Reduce("sum", body, axis)


def max(body, axis) -> Reduce:  # noqa: A001 - te's name
    return Reduce("max", body, axis)


def relu(x) -> Call:
    return Call("relu", _expr(x, "te.relu"))


def gelu(x) -> Call:
    return Call("gelu", _expr(x, "te.gelu"))


def exp(x) -> Call:
    return Call("exp", _expr(x, "te.exp"))


def cast(x, dtype) -> Call:
    if dtype not in DTYPES:
        raise ValueError(f"te.cast: dtype must be one of {DTYPES}, got {dtype!r}")
    return Call("cast", _expr(x, "te.cast"), dtype)


def all(*conds) -> All:  # noqa: A001 - te's name
    for c in conds:
        if not isinstance(c, (Compare, All)):
            raise TypeError(f"te.all: expects comparisons of expressions, got {c!r}")
    return All(conds)


def if_then_else(cond, then, otherwise) -> IfThenElse:
    """`then` where `cond` holds, else `otherwise` (zero padding: `if_then_else(in_bounds, X[..], 0)`)."""
    if not isinstance(cond, (Compare, All)):
        raise TypeError(f"te.if_then_else: the condition must be a comparison or te.all, got {cond!r}")
    return IfThenElse(cond, _expr(then, "te.if_then_else"), _expr(otherwise, "te.if_then_else"))


# ---------------------------------------------------------------- helpers
def _size(s, where):
    if isinstance(s, Expr) and not isinstance(s, (Const, Compare, All, IfThenElse, Reduce, Access, ReduceAxis)) \
            and not any(isinstance(x, (ReduceAxis, Access, Reduce)) for x in walk(s)):
        return s                                  # a te.var, or arithmetic on them (a conv's output size)
    if isinstance(s, int) and not isinstance(s, bool) and s > 0:
        return s
    raise ValueError(f"{where}: a size must be a positive int or a te.var, got {s!r}")


def _expr(x, where):
    if isinstance(x, Expr):
        return x
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return Const(x)
    raise TypeError(f"{where}: {x!r} is not an expression")


def _dtype_of(e):
    """The type an expression's inputs share (the output's default)."""
    if isinstance(e, Access):
        return e.tensor.dtype
    if isinstance(e, Call) and e.fn == "cast":
        return e.dtype
    for child in children(e):
        d = _dtype_of(child)
        if d is not None:
            return d
    return None


def walk(e):
    yield e
    for c in children(e):
        yield from walk(c)


def children(e):
    if isinstance(e, (Binary, Compare)):
        return (e.a, e.b)
    if isinstance(e, All):
        return e.conds
    if isinstance(e, IfThenElse):
        return (e.cond, e.then, e.otherwise)
    if isinstance(e, Call):
        return (e.arg,)
    if isinstance(e, Reduce):
        return (e.body,)
    if isinstance(e, Access):
        return e.index
    return ()
