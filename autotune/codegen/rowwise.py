"""Row-wise computations of several stages (softmax: max, exp-sum, normalise), one kernel holding
whole rows: their analysis, source and operator."""
from __future__ import annotations

import textwrap

import numpy as np
import minitriton as mt

from .. import te
from ..families import rowsoftmax as rowsoftmax_family
from ..sketch import Decision
from ..sketch import Sketch
from ..space import as_config
from .analysis import NUMPY_TYPES, Unsupported, element_strides, inline
from .operator import Operator, compile_source


class RowWise:
    """Y[m, n] = an element-wise expression of one input's row X[m, :] and of reductions over
    that row (softmax: max, exp-sum, normalise): one program holds ROWS whole rows."""

    def __init__(self, output: te.Compute):
        if len(output.shape) != 2:
            raise Unsupported(f"{output.name}: a row-wise computation has a 2-D output")
        self.output = output
        self.m, self.n = output.axes
        self.body = inline(output.body)
        self.tensors, self.lines, self.memo, self.ops, self.row_ops = [], [], {}, 0, 0
        self.rowvec = set()   # names holding one value per row (reductions, and arithmetic on them alone)
        self.dtype_out = output.dtype
        self.expr = self._emit(self.body, self.n)
        if len(self.tensors) != 1:
            raise Unsupported(f"{output.name}: a row-wise computation reads one input ({len(self.tensors)} here)")
        t, _ = self.tensors[0]
        self.inputs = [t]
        self.dtype_in = t.dtype
        self.sizes = {"M": output.shape[0], "N": output.shape[1]}

    def _canon(self, e, col):
        """The expression's text with the column variable of its context written '@': the same
        computation over the row block reads alike whatever the axis was called."""
        text = repr(e)
        return text.replace(f"{col.name}]", "@]").replace(f"[{col.name},", "[@,") if col is not None else text

    def _emit(self, e, col):
        key = (self._canon(e, col), type(e).__name__)
        if key in self.memo:
            return self.memo[key]
        out = self._emit_new(e, col)
        if isinstance(e, (te.Binary, te.Call)):  # computed once, however often it is read
            name = f"t{len(self.lines)}"
            self.lines.append(f"{name} = {out}")
            if self._row_only(e, col):
                self.rowvec.add(name)
                self.ops, self.row_ops = self.ops - 1, self.row_ops + 1
            out = name
        self.memo[key] = out
        return out

    def _row_only(self, e, col):
        """Whether e's operands are all per-row values or constants (then so is e)."""
        names = [self.memo.get((self._canon(c, col), type(c).__name__)) for c in te.children(e)]
        return all(isinstance(c, te.Const) or n in self.rowvec for c, n in zip(te.children(e), names))

    def _emit_new(self, e, col):
        if isinstance(e, te.Const):
            return repr(float(e.value))
        if isinstance(e, te.Binary) and e.op in "+-*/":
            a, b = self._emit(e.a, col), self._emit(e.b, col)
            self.ops += 1
            return f"({a} {e.op} {b})"
        if isinstance(e, te.Call) and e.fn in ("exp", "relu"):
            x = self._emit(e.arg, col)
            self.ops += 1
            return f"tl.exp({x})" if e.fn == "exp" else f"tl.maximum({x}, 0.0)"
        if isinstance(e, te.Access) and isinstance(e.tensor, te.Placeholder) and len(e.index) == 2:
            if [id(i) for i in e.index] == [id(self.m), id(col)]:
                layout = (0, 1)
            elif [id(i) for i in e.index] == [id(col), id(self.m)]:
                layout = (1, 0)
            else:
                raise Unsupported(f"{e!r}: a row-wise computation reads its input at [{self.m.name}, column]")
            if (e.tensor, layout) not in self.tensors:
                self.tensors.append((e.tensor, layout))
            return f"x{self.tensors.index((e.tensor, layout))}"
        if isinstance(e, te.Reduce) and len(e.axes) == 1 and e.kind in ("sum", "max"):
            inner = self._emit(e.body, e.axes[0])
            identity = "0.0" if e.kind == "sum" else "-float('inf')"
            name = f"r{len(self.lines)}"
            self.ops += 1
            self.lines.append(f"{name} = tl.{e.kind}(tl.where(mask, {inner}, {identity}), axis=1)[:, None]")
            self.rowvec.add(name)
            return name
        raise Unsupported(f"{e!r}: not generated in a row-wise computation (element-wise +-*/, exp, relu and "
                          f"row reductions are)")


def rowwise_source(c: RowWise, name: str) -> str:
    (t, layout), = c.tensors
    sm, sn = ("stride_xm", "stride_xn")
    body = textwrap.indent("\n".join(c.lines), " " * 4)
    return f'''@mt.jit
def {name}_kernel(x_ptr, y_ptr, M, N, {sm}, {sn}, stride_ym, stride_yn, BLOCK: tl.constexpr, ROWS: tl.constexpr):
    """{c.output.name} = {c.body!r}: ROWS whole rows per program."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x0 = tl.load(x_ptr + rows[:, None] * {sm} + cols[None, :] * {sn}, mask=mask, other=0.0).to(tl.float32)
{body}
    tl.store(y_ptr + rows[:, None] * stride_ym + cols[None, :] * stride_yn, ({c.expr}).to(y_ptr.dtype.element_ty),
             mask=mask)
'''


class RowWiseOperator(Operator):
    def __init__(self, c: RowWise):
        super().__init__(c, rowsoftmax_family.SPACE, rowsoftmax_family.DEFAULT)
        self.source = rowwise_source(c, self.__name__)
        self.kernel = compile_source(self.source, f"<te.generate {self.__name__}>")[f"{self.__name__}_kernel"]

    def sketch_rules(self, shape, space):
        return [Decision("row-wise, fused stages", "always inline + simple reduction", True,
                         f"each stage of {self.name} reads whole rows: the row stays in one program across them",
                         space, self.source)]

    @property
    def sketches(self):
        return [Sketch("row-wise, fused stages", ("always inline", "simple reduction"), self.space, self.source)]

    def launch_profile(self, shape, cfg):
        dims = {d: self._size(self.c.sizes[d], shape) for d in ("M", "N")}
        return rowsoftmax_family.launch_profile(dims, cfg, np.dtype(NUMPY_TYPES[self.c.dtype_in]).itemsize, ops=self.c.ops,
                                                row_ops=self.c.row_ops,
                              names=(f"{self.__name__}_kernel",),
                              out_itemsize=np.dtype(NUMPY_TYPES[self.c.dtype_out]).itemsize)

    def __call__(self, x, config=None, out=None):
        env = self._bind((x,))
        M, N = (self._size(self.c.sizes[d], env) for d in ("M", "N"))
        block = mt.next_power_of_2(N)
        if block > 1 << 20:
            raise Unsupported(f"{self.name}: rows of {N} do not fit one block (at most 2^20 elements)")
        cfg = as_config(config or self.default)
        rows = {**self.default.kwargs, **cfg.kwargs}["ROWS"]
        (_, layout), = self.c.tensors
        sx = element_strides(x)
        y = np.empty((M, N), NUMPY_TYPES[self.c.dtype_out]) if out is None else out
        self.kernel[(-(-M // rows),)](x, y, M, N, sx[layout[0]], sx[layout[1]], *element_strides(y), BLOCK=block,
                                      ROWS=rows, num_warps=cfg.num_warps, num_stages=cfg.num_stages)
        return y
