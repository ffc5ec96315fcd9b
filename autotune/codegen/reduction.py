"""Reductions (sum, max) over either axis of a 2-D input: one program per row, and rfactor for a
few long rows; their analysis, source and operator."""
from __future__ import annotations


import numpy as np

from .. import te
from ..families import rowsum as rowsum_family
from ..sketch import Sketch
from ..sketch import reduction_rules
from ..space import Space, as_config
from .analysis import NUMPY_TYPES, Unsupported, element_strides, inline, reductions, strip_casts
from .operator import Operator, compile_source


class RowReduction:
    """R[m] = sum or max over r of X[m, r] (or X[r, m]), then an optional cast."""

    def __init__(self, output: te.Compute):
        if len(output.shape) != 1:
            raise Unsupported(f"{output.name} = {output.body!r}: a reduction is generated for 1-D outputs of 2-D "
                              f"inputs so far")
        body = inline(output.body)
        red = reductions(body, [])[0]
        if len(red.axes) != 1:
            raise Unsupported(f"{red!r}: a reduction over one axis is generated so far")
        if strip_casts(body) is not red:
            raise Unsupported(f"{output.name} = {body!r}: only a cast may follow a reduction so far")
        x = strip_casts(red.body)
        (m,), (r,) = output.axes, red.axes
        if not (isinstance(x, te.Access) and isinstance(x.tensor, te.Placeholder) and len(x.index) == 2
                and set(map(id, x.index)) == {id(m), id(r)}):
            raise Unsupported(f"{red!r}: the reduced expression must read one 2-D input at [{m.name}, {r.name}] "
                              f"or [{r.name}, {m.name}]")
        self.output, self.red, self.x, self.m, self.r = output, red, x, m, r
        self.dims = (x.index.index(m), x.index.index(r))
        self.kind, self.inputs = red.kind, [x.tensor]
        self.sizes = {"M": output.shape[0], "N": r.extent}
        self.dtype_in, self.dtype_out = x.tensor.dtype, output.dtype


def reduction_source(c: RowReduction, name: str) -> str:
    init = "0.0" if c.kind == "sum" else "-float('inf')"
    step = "acc + x.to(tl.float32)" if c.kind == "sum" else "tl.maximum(acc, x.to(tl.float32))"
    return f'''@mt.jit
def {name}_kernel(x_ptr, out_ptr, N, stride_xm, stride_xn, stride_om, stride_os, BLOCK_N: tl.constexpr,
                  SPLIT: tl.constexpr):
    """{c.output.name} = {c.output.body!r}: program (row, split) reduces one slice of a row."""
    row = tl.program_id(0)
    split = tl.program_id(1)
    n_per_split = tl.cdiv(N, SPLIT * BLOCK_N) * BLOCK_N
    start = split * n_per_split
    cols = tl.arange(0, BLOCK_N)
    acc = tl.full((BLOCK_N,), {init}, tl.float32)
    for n in range(0, n_per_split, BLOCK_N):
        offs = start + n + cols
        x = tl.load(x_ptr + row * stride_xm + offs * stride_xn, mask=offs < N, other={init})
        acc = {step}
    tl.store(out_ptr + row * stride_om + split * stride_os, tl.{c.kind}(acc, axis=0).to(out_ptr.dtype.element_ty))


@mt.jit
def {name}_partials(ws_ptr, out_ptr, M, stride_wm, BLOCK_M: tl.constexpr, SPLIT: tl.constexpr):
    """rfactor's second kernel: each row's SPLIT partial results combined."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    parts = tl.load(ws_ptr + rows[:, None] * stride_wm + tl.arange(0, SPLIT)[None, :], mask=rows[:, None] < M,
                    other={init})
    tl.store(out_ptr + rows, tl.{c.kind}(parts, axis=1).to(out_ptr.dtype.element_ty), mask=rows < M)
'''


class ReductionOperator(Operator):
    def __init__(self, c: RowReduction):
        super().__init__(c, rowsum_family.SPACE, rowsum_family.DEFAULT)
        self.source = reduction_source(c, self.__name__)
        ns = compile_source(self.source, f"<te.generate {self.__name__}>")
        self.kernel, self.partials = ns[f"{self.__name__}_kernel"], ns[f"{self.__name__}_partials"]

    def sketch_rules(self, shape, space):
        rows, length = (self._size(self.c.sizes[d], shape) for d in ("M", "N"))
        decisions = reduction_rules(rows, length, space, "SPLIT")
        for d in decisions:
            d.source = self.source
        return decisions

    @property
    def sketches(self):
        return [Sketch("one program per row", ("simple reduction",), Space({**self.space.knobs, "SPLIT": [1]}),
                       self.source),
                Sketch("rfactor", ("rfactor",), Space({**self.space.knobs,
                                                       "SPLIT": [v for v in self.space.knobs["SPLIT"] if v > 1]}),
                       self.source)]

    def launch_profile(self, shape, cfg):
        dims = {d: self._size(self.c.sizes[d], shape) for d in ("M", "N")}
        return rowsum_family.launch_profile(dims, cfg, np.dtype(NUMPY_TYPES[self.c.dtype_in]).itemsize,
                                            names=(f"{self.__name__}_kernel", f"{self.__name__}_partials"))

    def __call__(self, x, config=None, out=None):
        c = self.c
        env = self._bind((x,))
        M, N = (self._size(c.sizes[d], env) for d in ("M", "N"))
        cfg = as_config(config or self.default)
        kw = {**self.default.kwargs, **cfg.kwargs}
        sx = element_strides(x)
        y = np.empty(M, NUMPY_TYPES[c.dtype_out]) if out is None else out
        split = kw["SPLIT"]
        meta = dict(BLOCK_N=kw["BLOCK_N"], SPLIT=split, num_warps=cfg.num_warps, num_stages=cfg.num_stages)
        if split == 1:
            self.kernel[(M, 1)](x, y, N, sx[c.dims[0]], sx[c.dims[1]], element_strides(y)[0], 0, **meta)
        else:
            ws = np.empty((M, split), np.float32)
            self.kernel[(M, split)](x, ws, N, sx[c.dims[0]], sx[c.dims[1]], split, 1, **meta)
            self.partials[(-(-M // 16),)](ws, y, M, split, BLOCK_M=16, SPLIT=split)
        return y
