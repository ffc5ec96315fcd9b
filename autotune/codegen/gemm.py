"""Contractions (matmuls, batched or with either operand transposed) with an element-wise epilogue
fused into the store: their analysis, their kernels' source (multi-level tiling, and rfactor's
split-K partial tiles with a reduction kernel), and their operator."""
from __future__ import annotations

import textwrap

import numpy as np

from .. import te
from ..families import gemm as gemm_family
from ..sketch import Sketch, gemm_rules
from ..space import Space, as_config
from .analysis import NUMPY_TYPES, Unsupported, element_strides, inline, reductions, strip_casts
from .operator import Operator, compile_source


class Contraction:
    """C[m, n] (or C[b, m, n], a batch of them) = epilogue(sum_k A[..] * B[..]): which input
    dims are b, m, n and k."""

    def __init__(self, output: te.Compute):
        if len(output.shape) not in (2, 3):
            raise Unsupported(f"{output.name}: a matmul's output is [m, n] or [batch, m, n], got {len(output.shape)} "
                              f"dimensions")
        body = inline(output.body)
        reds = reductions(body, [])
        if len(reds) != 1:
            raise Unsupported(f"{output.name} = {body!r}: one reduction is supported, found {len(reds)}")
        red = reds[0]
        if red.kind != "sum" or len(red.axes) != 1:
            raise Unsupported(f"{red!r}: only a sum over one axis of a product is generated so far")
        prod = strip_casts(red.body)
        if not (isinstance(prod, te.Binary) and prod.op == "*"):
            raise Unsupported(f"{red!r}: the reduced expression is not a product of two inputs")
        a, b = strip_casts(prod.a), strip_casts(prod.b)
        batch = output.axes[0] if len(output.shape) == 3 else None
        m, n = output.axes[-2:]
        k = red.axes[0]
        for x in (a, b):
            if not (isinstance(x, te.Access) and isinstance(x.tensor, te.Placeholder) and len(x.index) in (2, 3)
                    and all(isinstance(i, te.Var) for i in x.index)):
                raise Unsupported(f"{x!r}: each factor must read an input at plain indices")
        if k not in a.index or k not in b.index:
            raise Unsupported(f"{red!r}: both factors must be indexed by the reduction axis {k.name}")
        if m not in a.index and m in b.index:
            a, b = b, a
        if m not in a.index or n not in b.index:
            raise Unsupported(f"{red!r}: the factors must be indexed by ({m.name}, k) and (k, {n.name})")
        for x, own in ((a, m), (b, n)):
            extra = [i for i in x.index if i is not own and i is not k]
            if extra and extra != [batch]:
                raise Unsupported(f"{x!r}: a factor's third index must be the batch axis"
                                  + (f" {batch.name}" if batch is not None else " (the output has none)"))
        self.output, self.red, self.a, self.b, self.m, self.n, self.k = output, red, a, b, m, n, k
        self.batch = batch
        self.a_dims = (a.index.index(m), a.index.index(k), a.index.index(batch) if batch in a.index else None)
        self.b_dims = (b.index.index(k), b.index.index(n), b.index.index(batch) if batch in b.index else None)
        if a.tensor.dtype != b.tensor.dtype:
            raise Unsupported(f"{red!r}: inputs of different types ({a.tensor.dtype}, {b.tensor.dtype})")
        self.dtype_in, self.dtype_out = a.tensor.dtype, output.dtype
        self.sizes = {"M": output.shape[-2], "N": output.shape[-1], "K": k.extent,
                      "B": output.shape[0] if batch is not None else 1}
        self.epilogue = Epilogue(body, red, m, n)
        self.inputs = [a.tensor, b.tensor] + [t for t in self.epilogue.tensors if t not in (a.tensor, b.tensor)]


class Epilogue:
    """The element-wise expression around the reduction, as minitriton source over `acc`
    (fp32, one output tile), with the side inputs it loads and its cost."""

    def __init__(self, body, red, m, n):
        """`m`, `n`: the output axes of the tile's rows and columns (m None for a convolution,
        whose rows are (image, pixel) pairs: its epilogue may read vectors along n only)."""
        self.tensors, self.lines, self.ops = [], [], 0
        self.per_n = self.per_m = self.per_mn = 0
        self.m, self.n = m, n
        self.expr = self._emit(body, red)

    def _emit(self, e, red):
        if e is red:
            return "acc"
        if isinstance(e, te.Const):
            return repr(float(e.value))
        if isinstance(e, te.Binary):
            a, b = self._emit(e.a, red), self._emit(e.b, red)
            self.ops += 1
            return f"({a} {e.op} {b})"
        if isinstance(e, te.Call):
            x = self._emit(e.arg, red)
            if e.fn == "relu":
                self.ops += 1
                return f"tl.maximum({x}, 0.0)"
            if e.fn == "exp":
                self.ops += 1
                return f"tl.exp({x})"
            if e.fn == "gelu":   # erf form: 0.5 x (1 + erf(x / sqrt 2)), five element-wise ops
                name = self._temp(x)
                self.ops += 5
                return f"(0.5 * {name} * (1.0 + tl.erf({name} * 0.7071067811865476)))"
            if e.fn == "cast":   # rounded to the type, computed on in fp32
                return f"{x}.to(tl.{e.dtype}).to(tl.float32)"
        if isinstance(e, te.Access) and isinstance(e.tensor, te.Placeholder):
            return self._load(e)
        raise Unsupported(f"{e!r}: not an element-wise expression of the reduction and inputs")

    def _temp(self, x):
        name = f"e{len(self.lines)}"
        self.lines.append(f"{name} = {x}")
        return name

    def _load(self, e):
        t = e.tensor
        if t not in self.tensors:
            self.tensors.append(t)
        j = self.tensors.index(t)
        item = np.dtype(NUMPY_TYPES.get(t.dtype, np.float32)).itemsize
        idx = list(e.index)
        if idx == [self.n]:
            self.per_n += item
            return self._temp(f"tl.load(x{j}_ptr + offs_cn * stride_x{j}_0, mask=offs_cn < N, other=0.0)"
                              f".to(tl.float32)[None, :]")
        if self.m is not None and idx == [self.m]:
            self.per_m += item
            return self._temp(f"tl.load(x{j}_ptr + offs_cm * stride_x{j}_0, mask=offs_cm < M, other=0.0)"
                              f".to(tl.float32)[:, None]")
        if self.m is not None and idx in ([self.m, self.n], [self.n, self.m]):
            self.per_mn += item
            sm, sn = (0, 1) if idx[0] is self.m else (1, 0)
            return self._temp(f"tl.load(x{j}_ptr + offs_cm[:, None] * stride_x{j}_{sm} + offs_cn[None, :] * "
                              f"stride_x{j}_{sn}, mask=c_mask, other=0.0).to(tl.float32)")
        raise Unsupported(f"{e!r}: an epilogue input must be read at [n], [m] or [m, n] of the output "
                          f"(a convolution's along its channels only)")

    def source(self, indent):
        return textwrap.indent("\n".join(self.lines + [f"acc = {self.expr}"]), indent)

    @property
    def cost(self):
        return (self.ops, self.per_n, self.per_m, self.per_mn)


def side_params(c):
    extra = c.inputs[2:]
    ptrs = "".join(f", x{j}_ptr" for j in range(len(extra)))
    strides = "".join(f", stride_x{j}_{d}" for j, t in enumerate(extra) for d in range(len(t.shape)))
    return ptrs, strides


def contraction_source(c: Contraction, name: str) -> str:
    ptrs, strides = side_params(c)
    epi = c.epilogue.source(" " * 8)
    batch_args = ", stride_ab, stride_bb, stride_cb" if c.batch is not None else ""
    batch_lines = ("\n    pid_b = tl.program_id(2)   # one product of the batch\n"
                   "    a_ptr += pid_b * stride_ab\n    b_ptr += pid_b * stride_bb\n    c_ptr += pid_b * stride_cb"
                   if c.batch is not None else "")
    return f'''@mt.jit
def {name}_kernel(a_ptr, b_ptr, c_ptr{ptrs}, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cs, stride_cm, stride_cn{batch_args}{strides}, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr):
    """{c.output.name} = {c.output.body!r}, one BLOCK_M x BLOCK_N tile per program (of one K split)."""
    pid_m, pid_n = grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    pid_k = tl.program_id(1){batch_lines}
    k_per_split = tl.cdiv(K, SPLIT_K * BLOCK_K) * BLOCK_K
    k_start = pid_k * k_per_split
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + (k_start + offs_k[None, :]) * stride_ak)
    b_ptrs = b_ptr + ((k_start + offs_k[:, None]) * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, k_per_split, BLOCK_K):
        k_left = K - k_start - k
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    if SPLIT_K == 1:   # the epilogue, fused into the store
{epi}
        c = acc.to(c_ptr.dtype.element_ty)
    else:              # fp32 partial sums into the workspace
        c = acc
    tl.store(c_ptr + pid_k * stride_cs + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn, c, mask=c_mask)
'''


def reduce_source(c, name: str) -> str:
    ptrs, strides = side_params(c)
    epi = c.epilogue.source(" " * 4)
    batched = getattr(c, "batch", None) is not None
    batch_args = ", stride_wb, stride_cb" if batched else ""
    batch_lines = ("\n    pid_b = tl.program_id(2)\n    ws_ptr += pid_b * stride_wb\n    c_ptr += pid_b * stride_cb"
                   if batched else "")
    return f'''@mt.jit
def {name}_reduce(ws_ptr, c_ptr{ptrs}, M, N, stride_ws, stride_wm, stride_wn, stride_cm, stride_cn{batch_args}{strides},
                  SPLIT_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """rfactor's second kernel: the SPLIT_K partial tiles added, then the epilogue."""{batch_lines}
    offs_cm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    ws_ptrs = ws_ptr + offs_cm[:, None] * stride_wm + offs_cn[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for s in tl.static_range(SPLIT_K):
        acc += tl.load(ws_ptrs + s * stride_ws, mask=c_mask, other=0.0)
{epi}
    tl.store(c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=c_mask)
'''


class TiledOperator(Operator):
    """An operator whose kernels are a tiled main kernel and rfactor's reduction kernel."""

    def _tiled(self, main_source):
        """Compile a tiled kernel and rfactor's reduction kernel (its second launch) together."""
        self.main_source, self.reduce_source = main_source, reduce_source(self.c, self.__name__)
        ns = compile_source(self.main_source + "\n\n" + self.reduce_source, f"<te.generate {self.__name__}>")
        self.kernel, self.reducer = ns[f"{self.__name__}_kernel"], ns[f"{self.__name__}_reduce"]


class GemmOperator(TiledOperator):
    def __init__(self, c: Contraction):
        super().__init__(c, gemm_family.SPACE, gemm_family.DEFAULT)
        self._tiled(contraction_source(c, self.__name__))

    # -- sketches --------------------------------------------------------------------------------------
    def sketch_rules(self, shape, space):
        M, N, K, B = (self._size(self.c.sizes[d], shape) for d in ("M", "N", "K", "B"))
        what = f"{self.name} = sum over {self.c.k.name} of {self.c.a!r} * {self.c.b!r}"
        epi = None if self.c.epilogue.expr == "acc" else "element-wise: " + self.c.epilogue.expr
        decisions = gemm_rules(M, N, K, space, what=what, epilogue=epi, batch=B)
        for d in decisions:
            d.source = self.main_source + ("\n\n" + self.reduce_source if "rfactor" in d.name else "")
        return decisions

    @property
    def sketches(self):
        """Every sketch the rules can make, with its source (`Task(op, ...).sketches` lists
        those generated at a shape)."""
        out = []
        for name, src in (("tiled", self.main_source), ("tiled + rfactor", self.main_source + "\n\n" + self.reduce_source)):
            split = [1] if name == "tiled" else [v for v in gemm_family.SPACE.knobs["SPLIT_K"] if v > 1]
            space = Space({**gemm_family.SPACE.knobs, "SPLIT_K": split})
            out.append(Sketch(name, ("multi-level tiling",) + (("rfactor",) if split != [1] else ()), space, src))
        return out

    # -- profile ---------------------------------------------------------------------------------------
    def launch_profile(self, shape, cfg):
        dims = {d: self._size(self.c.sizes[d], shape) for d in ("M", "N", "K")}
        item = np.dtype(NUMPY_TYPES[self.c.dtype_in]).itemsize
        return gemm_family.launch_profile(dims, cfg, itemsize=item, epilogue=self.c.epilogue.cost,
                              names=(f"{self.__name__}_kernel", f"{self.__name__}_reduce"),
                              batch=self._size(self.c.sizes["B"], shape))

    # -- running ---------------------------------------------------------------------------------------
    def __call__(self, *arrays, config=None, out=None):
        c = self.c
        env = self._bind(arrays)
        M, N, K, Bt = (self._size(c.sizes[d], env) for d in ("M", "N", "K", "B"))
        cfg = as_config(config or self.default)
        kw = {**self.default.kwargs, **cfg.kwargs}
        a, b = arrays[0], arrays[1]
        sa, sb = element_strides(a), element_strides(b)
        stride_am, stride_ak = sa[c.a_dims[0]], sa[c.a_dims[1]]
        stride_bk, stride_bn = sb[c.b_dims[0]], sb[c.b_dims[1]]
        side = list(arrays[2:])
        side_strides = [s for x in side for s in element_strides(x)]
        batched = c.batch is not None
        y = np.empty(((Bt,) if batched else ()) + (M, N), NUMPY_TYPES[c.dtype_out]) if out is None else out
        sy = element_strides(y)
        meta = dict(BLOCK_M=kw["BLOCK_M"], BLOCK_N=kw["BLOCK_N"], BLOCK_K=kw["BLOCK_K"], GROUP_M=kw["GROUP_M"],
                    SPLIT_K=kw["SPLIT_K"], num_warps=cfg.num_warps, num_stages=cfg.num_stages)
        grid = (-(-M // meta["BLOCK_M"]) * -(-N // meta["BLOCK_N"]), meta["SPLIT_K"], Bt)
        batch_strides = lambda out_b: ((sa[c.a_dims[2]] if c.a_dims[2] is not None else 0,  # noqa: E731
                                        sb[c.b_dims[2]] if c.b_dims[2] is not None else 0, out_b) if batched else ())
        operands = (a, b)
        k_strides = (M, N, K, stride_am, stride_ak, stride_bk, stride_bn)
        if meta["SPLIT_K"] == 1:
            self.kernel[grid](*operands, y, *side, *k_strides, 0, *sy[-2:], *batch_strides(sy[0] if batched else 0),
                              *side_strides, **meta)
        else:
            ws = np.empty((meta["SPLIT_K"],) + ((Bt,) if batched else ()) + (M, N), np.float32)
            sw = element_strides(ws)
            self.kernel[grid](*operands, ws, *side, *k_strides, sw[0], *sw[-2:],
                              *batch_strides(sw[1] if batched else 0), *side_strides, **meta)
            self.reducer[(-(-M // gemm_family.REDUCE_BLOCK), -(-N // gemm_family.REDUCE_BLOCK), Bt)](
                ws, y, *side, M, N, sw[0], *sw[-2:], *sy[-2:], *((sw[1], sy[0]) if batched else ()), *side_strides,
                SPLIT_K=meta["SPLIT_K"], BLOCK_M=gemm_family.REDUCE_BLOCK, BLOCK_N=gemm_family.REDUCE_BLOCK)
        return y
