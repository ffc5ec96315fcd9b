"""NHWC convolutions written with zero padding (te.if_then_else over the bounds): an implicit
GEMM, its source and its operator."""
from __future__ import annotations


import numpy as np

from .. import te
from ..families import conv as conv_family, gemm as gemm_family
from ..sketch import gemm_rules
from ..space import as_config
from .analysis import NUMPY_TYPES, Unsupported, element_strides, inline, reductions, size_value, strip_casts
from .gemm import Epilogue, GemmOperator, TiledOperator, side_params


def _affine(e):
    """(coefficient of each variable by id, constant) of a linear index expression, or None."""
    if isinstance(e, te.Const) and isinstance(e.value, int):
        return {}, e.value
    if isinstance(e, te.Var):
        return {id(e): 1}, 0
    if isinstance(e, te.Binary) and e.op in "+-":
        a, b = _affine(e.a), _affine(e.b)
        if a is None or b is None:
            return None
        sign = 1 if e.op == "+" else -1
        coef = dict(a[0])
        for k, v in b[0].items():
            coef[k] = coef.get(k, 0) + sign * v
        return {k: v for k, v in coef.items() if v}, a[1] + sign * b[1]
    if isinstance(e, te.Binary) and e.op == "*":
        a, b = _affine(e.a), _affine(e.b)
        if a is None or b is None:
            return None
        if not a[0]:
            a, b = b, a
        if b[0]:
            return None  # a product of two variables
        return {k: v * b[1] for k, v in a[0].items()}, a[1] * b[1]
    return None


class Conv2D:
    """Y[n, oh, ow, f] = epilogue(sum over kh, kw, c of X[n, oh*sh + kh - ph, ow*sw + kw - pw, c] *
    W[kh, kw, c, f]), the input zero-padded through te.if_then_else: an implicit GEMM."""

    def __init__(self, output: te.Compute):
        body = inline(output.body)
        reds = reductions(body, [])
        if len(output.shape) != 4 or len(reds) != 1 or len(reds[0].axes) != 3 or reds[0].kind != "sum":
            raise Unsupported(f"{output.name} = {body!r}: not a 2-D convolution (a 4-D NHWC output summed over "
                              f"three axes)")
        red = reds[0]
        prod = strip_casts(red.body)
        if not (isinstance(prod, te.Binary) and prod.op == "*"):
            raise Unsupported(f"{red!r}: the reduced expression is not a product of input and filter")
        n, oh, ow, f = output.axes
        x, w = strip_casts(prod.a), strip_casts(prod.b)
        if isinstance(w, te.IfThenElse) or (isinstance(x, te.Access) and len(x.index) == 4 and x.index[3] is f):
            x, w = w, x
        if not (isinstance(w, te.Access) and isinstance(w.tensor, te.Placeholder) and len(w.index) == 4
                and w.index[3] is f and set(map(id, w.index[:3])) == set(map(id, red.axes))):
            raise Unsupported(f"{w!r}: the filter must be read as W[kh, kw, c, {f.name}] (HWIO)")
        kh, kw, c = w.index[:3]
        cond = None
        if isinstance(x, te.IfThenElse):
            if not (isinstance(x.otherwise, te.Const) and x.otherwise.value == 0):
                raise Unsupported(f"{x!r}: padding must fill with 0")
            cond, x = x.cond, strip_casts(x.then)
        if not (isinstance(x, te.Access) and isinstance(x.tensor, te.Placeholder) and len(x.index) == 4
                and x.index[0] is n and x.index[3] is c):
            raise Unsupported(f"{x!r}: the input must be read as X[{n.name}, h, w, {c.name}] (NHWC)")
        self.stride, self.padding = [], []
        for idx, out_axis, k_axis in ((x.index[1], oh, kh), (x.index[2], ow, kw)):
            aff = _affine(idx)
            if aff is None or set(aff[0]) != {id(out_axis), id(k_axis)} or aff[0][id(k_axis)] != 1 \
                    or aff[0][id(out_axis)] < 1 or aff[1] > 0:
                raise Unsupported(f"{idx!r}: an input index must be {out_axis.name}*stride + {k_axis.name} - padding")
            self.stride.append(aff[0][id(out_axis)])
            self.padding.append(-aff[1])
        self._check_bounds(cond, x, output.name)
        if x.tensor.dtype != w.tensor.dtype:
            raise Unsupported(f"{red!r}: input and filter of different types")
        self.output, self.red, self.x, self.w = output, red, x, w
        self.axes = (n, oh, ow, f)
        self.dtype_in, self.dtype_out = x.tensor.dtype, output.dtype
        self.epilogue = Epilogue(body, red, None, f)
        self.inputs = [x.tensor, w.tensor] + [t for t in self.epilogue.tensors if t not in (x.tensor, w.tensor)]

    def _check_bounds(self, cond, x, name):
        """The condition must be exactly the input's bounds (else the kernel's masks would not
        compute what was written)."""
        H, W = x.tensor.shape[1], x.tensor.shape[2]
        if cond is None:
            if any(self.padding):
                raise Unsupported(f"{name}: {x!r} reads outside the input for padding {self.padding}; zero-pad "
                                  f"it with te.if_then_else(te.all(0 <= h, h < H, 0 <= w, w < W), X[...], 0)")
            return
        conds = cond.conds if isinstance(cond, te.All) else (cond,)
        want = set()
        for idx, size in ((x.index[1], H), (x.index[2], W)):
            want.add(_key(_affine(idx)))                                            # idx >= 0
            want.add(_key(_affine(te.Binary("-", te.Binary("-", _as_expr(size), idx), te.Const(1)))))  # idx < size
        got = set()
        for cnd in conds:
            if not isinstance(cnd, te.Compare):
                raise Unsupported(f"{cnd!r}: padding conditions must be comparisons")
            g = te.Binary("-", cnd.b, cnd.a)            # a <= b: b - a >= 0;  a < b: b - a - 1 >= 0
            got.add(_key(_affine(g if cnd.op == "<=" else te.Binary("-", g, te.Const(1)))))
        if None in got or got != want:
            raise Unsupported(f"{name}: the padding condition {cond!r} is not the input's bounds")


def _as_expr(s):
    return s if isinstance(s, te.Expr) else te.Const(s)


def _key(aff):
    return None if aff is None else (tuple(sorted(aff[0].items())), aff[1])


def conv_source(c: Conv2D, name: str) -> str:
    ptrs, strides = side_params(c)
    epi = c.epilogue.source(" " * 8)
    return f'''@mt.jit
def {name}_kernel(x_ptr, w_ptr, y_ptr{ptrs}, H, W, C, F, OH, OW, KW, M, K, conv_stride_h, conv_stride_w,
                  pad_h, pad_w, stride_xn, stride_xh, stride_xw, stride_xc, stride_wk, stride_wf, stride_ys, stride_ym,
                  stride_yf{strides}, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr):
    """{c.output.name}: an implicit GEMM over (image, output pixel) x filter, input tiles gathered."""
    pid_m, pid_n = grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(F, BLOCK_N), GROUP_M)
    pid_k = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m_ok = offs_m < M
    n_ok = offs_n < F
    img = offs_m // (OH * OW)
    pix = offs_m % (OH * OW)
    ih0 = (pix // OW) * conv_stride_h - pad_h
    iw0 = (pix % OW) * conv_stride_w - pad_w
    k_per_split = tl.cdiv(K, SPLIT_K * BLOCK_K) * BLOCK_K
    k_start = pid_k * k_per_split
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, k_per_split, BLOCK_K):
        offs_k = k_start + k + tl.arange(0, BLOCK_K)
        k_ok = offs_k < K
        kh = offs_k // (KW * C)
        kw = (offs_k // C) % KW
        ch = offs_k % C
        ih = ih0[:, None] + kh[None, :]
        iw = iw0[:, None] + kw[None, :]
        a_mask = m_ok[:, None] & k_ok[None, :] & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        a = tl.load(x_ptr + img[:, None] * stride_xn + ih * stride_xh + iw * stride_xw + ch[None, :] * stride_xc,
                    mask=a_mask, other=0.0)
        b = tl.load(w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wf,
                    mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
    offs_cm = offs_m
    offs_cn = offs_n
    N = F              # the implicit GEMM's columns, for the epilogue
    c_mask = m_ok[:, None] & n_ok[None, :]
    if SPLIT_K == 1:   # the epilogue, fused into the store
{epi}
        out = acc.to(y_ptr.dtype.element_ty)
    else:
        out = acc
    tl.store(y_ptr + pid_k * stride_ys + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yf, out, mask=c_mask)
'''


class ConvOperator(TiledOperator):
    def __init__(self, c: Conv2D):
        super().__init__(c, gemm_family.SPACE, gemm_family.DEFAULT)
        self._tiled(conv_source(c, self.__name__))

    def dims(self, shape):
        """N, H, W, C, F, KH, KW, stride, padding, and the implicit GEMM's M, N, K."""
        x, w = self.c.x.tensor.shape, self.c.w.tensor.shape
        n, h, wd, ch = (size_value(s, shape) for s in x)
        kh, kw, _, f = (size_value(s, shape) for s in w)
        (sh, sw), (ph, pw) = self.c.stride, self.c.padding
        oh, ow = (h + 2 * ph - kh) // sh + 1, (wd + 2 * pw - kw) // sw + 1
        declared = (size_value(self.c.output.shape[1], shape), size_value(self.c.output.shape[2], shape))
        if declared != (oh, ow):
            raise ValueError(f"{self.name}: its output is declared {declared[0]}x{declared[1]} but the convolution "
                             f"gives {oh}x{ow}")
        return dict(N=n, H=h, W=wd, C=ch, F=f, KH=kh, KW=kw, stride=(sh, sw), padding=(ph, pw)), (oh, ow)

    def sketch_rules(self, shape, space):
        d, (oh, ow) = self.dims(shape)
        decisions = gemm_rules(d["N"] * oh * ow, d["F"], d["KH"] * d["KW"] * d["C"], space,
                               what=f"the implicit GEMM of {self.name}")
        for x in decisions:
            x.source = self.main_source + ("\n\n" + self.reduce_source if "rfactor" in x.name else "")
        return decisions

    @property
    def sketches(self):
        return GemmOperator.sketches.fget(self)

    def launch_profile(self, shape, cfg):
        d, _ = self.dims(shape)
        return conv_family.launch_profile(d, cfg, np.dtype(NUMPY_TYPES[self.c.dtype_in]).itemsize,
                                          epilogue=self.c.epilogue.cost,
                                          names=(f"{self.__name__}_kernel", f"{self.__name__}_reduce"))

    def __call__(self, *arrays, config=None, out=None):
        env = self._bind(arrays)
        d, (oh, ow) = self.dims(env)
        x, w = arrays[0], arrays[1]
        n, f = d["N"], d["F"]
        M, K = n * oh * ow, d["KH"] * d["KW"] * d["C"]
        w2 = np.ascontiguousarray(w).reshape(K, f)
        cfg = as_config(config or self.default)
        kw = {**self.default.kwargs, **cfg.kwargs}
        side = list(arrays[2:])
        side_strides = [s for a in side for s in element_strides(a)]
        y = np.empty((n, oh, ow, f), NUMPY_TYPES[self.c.dtype_out]) if out is None else out
        y2 = y.reshape(M, f)
        meta = dict(BLOCK_M=kw["BLOCK_M"], BLOCK_N=kw["BLOCK_N"], BLOCK_K=kw["BLOCK_K"], GROUP_M=kw["GROUP_M"],
                    SPLIT_K=kw["SPLIT_K"], num_warps=cfg.num_warps, num_stages=cfg.num_stages)
        grid = (-(-M // meta["BLOCK_M"]) * -(-f // meta["BLOCK_N"]), meta["SPLIT_K"])
        common = (d["H"], d["W"], d["C"], f, oh, ow, d["KW"], M, K, *d["stride"], *d["padding"], *element_strides(x),
                  *element_strides(w2))
        if meta["SPLIT_K"] == 1:
            self.kernel[grid](x, w2, y2, *side, *common, 0, *element_strides(y2), *side_strides, **meta)
        else:
            ws = np.empty((meta["SPLIT_K"], M, f), np.float32)
            self.kernel[grid](x, w2, ws, *side, *common, *element_strides(ws), *side_strides, **meta)
            self.reducer[(-(-M // gemm_family.REDUCE_BLOCK), -(-f // gemm_family.REDUCE_BLOCK))](
                ws, y2, *side, M, f, *element_strides(ws), *element_strides(y2), *side_strides, SPLIT_K=meta["SPLIT_K"],
                BLOCK_M=gemm_family.REDUCE_BLOCK, BLOCK_N=gemm_family.REDUCE_BLOCK)
        return y
