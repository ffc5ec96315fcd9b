"""From a te computation to minitriton kernels: analysis, Ansor's sketch rules, and source.

`generate(output)` inlines element-wise computes into their consumer, then finds the one
reduction at the heart of the computation and classifies it:

* a contraction `sum_k A[.., k, ..] * B[.., k, ..]` (a matmul, either operand transposed, by
  strides) with an element-wise epilogue (bias along either output axis, another M x N input,
  scaling, ReLU, GELU, exp, casts): multi-level tiling with the epilogue fused into the store,
  and, where the output cannot fill the GPU and K is long, rfactor (split-K partial tiles and
  a kernel that adds them and applies the epilogue);
* anything else is refused with an error naming the expression.

Each sketch's kernels are emitted as readable minitriton source (`sketch.source`), compiled
from it (registered with linecache so tracebacks and the lowering see it), with the blanks
(BLOCK_M/N/K, GROUP_M, SPLIT_K, warps, stages) as constexpr meta-parameters, and the operator
states its launch profile from the same structure as the library GEMM (kernels/gemm.py).
"""
from __future__ import annotations

import itertools
import linecache
import textwrap

import numpy as np

from . import te
from .families import conv as conv_family, gemm as gemm_family, rowsoftmax as rowsoftmax_family, \
    rowsum as rowsum_family
from .sketch import Sketch, gemm_rules
from .space import Config, Space, as_config

SPACE = dict(BLOCK_M=[16, 32, 64, 128, 256], BLOCK_N=[16, 32, 64, 128, 256], BLOCK_K=[16, 32, 64, 128, 256],
             num_warps=[1, 2, 4, 8, 16], num_stages=[1, 2, 3, 4, 5, 6, 7], GROUP_M=[1, 2, 4, 8, 16, 32],
             SPLIT_K=[1, 2, 4, 8, 16, 32])
DEFAULT = Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "SPLIT_K": 1}, num_warps=4, num_stages=3)
REDUCE_BLOCK = 64
_NP = {"float16": np.float16, "float32": np.float32}


class Unsupported(NotImplementedError):
    """The generator has no rule for this expression (it says which)."""


# ---------------------------------------------------------------- analysis
def _inline(e):
    """`e` with every read of a compute replaced by that compute's body at the read's indices
    (a compute holding a reduction only where it is read element-wise: its own indices)."""
    if isinstance(e, te.Access) and isinstance(e.tensor, te.Compute):
        t = e.tensor
        plain = all(isinstance(i, te.Var) for i in e.index) and len(set(map(id, e.index))) == len(e.index)
        if not plain and _reductions(t.body, []):
            raise Unsupported(f"{e!r}: reading the reduction {t.name} at shifted or repeated indices")
        return _inline(_substitute(t.body, dict(zip(map(id, t.axes), e.index))))
    return _rebuild(e, _inline)


def _rebuild(e, f):
    """`e` with `f` applied to its children."""
    if isinstance(e, te.Access):
        return te.Access(e.tensor, tuple(f(i) for i in e.index))
    if isinstance(e, te.Binary):
        return te.Binary(e.op, f(e.a), f(e.b))
    if isinstance(e, te.Compare):
        return te.Compare(e.op, f(e.a), f(e.b))
    if isinstance(e, te.All):
        return te.All(f(c) for c in e.conds)
    if isinstance(e, te.IfThenElse):
        return te.IfThenElse(f(e.cond), f(e.then), f(e.otherwise))
    if isinstance(e, te.Call):
        return te.Call(e.fn, f(e.arg), e.dtype)
    if isinstance(e, te.Reduce):
        return te.Reduce(e.kind, f(e.body), e.axes)
    return e


def _substitute(e, env):
    if isinstance(e, te.Var) and id(e) in env:
        return env[id(e)]
    return _rebuild(e, lambda x: _substitute(x, env))


def _reductions(e, out):
    if isinstance(e, te.Reduce):
        out.append(e)
    for c in te.children(e):
        _reductions(c, out)
    return out


class Contraction:
    """C[m, n] (or C[b, m, n], a batch of them) = epilogue(sum_k A[..] * B[..]): which input
    dims are b, m, n and k."""

    def __init__(self, output: te.Compute):
        if len(output.shape) not in (2, 3):
            raise Unsupported(f"{output.name}: a matmul's output is [m, n] or [batch, m, n], got {len(output.shape)} "
                              f"dimensions")
        body = _inline(output.body)
        reds = _reductions(body, [])
        if len(reds) != 1:
            raise Unsupported(f"{output.name} = {body!r}: one reduction is supported, found {len(reds)}")
        red = reds[0]
        if red.kind != "sum" or len(red.axes) != 1:
            raise Unsupported(f"{red!r}: only a sum over one axis of a product is generated so far")
        prod = _strip_casts(red.body)
        if not (isinstance(prod, te.Binary) and prod.op == "*"):
            raise Unsupported(f"{red!r}: the reduced expression is not a product of two inputs")
        a, b = _strip_casts(prod.a), _strip_casts(prod.b)
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


def _strip_casts(e):
    while isinstance(e, te.Call) and e.fn == "cast":
        e = e.arg
    return e


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
        item = np.dtype(_NP.get(t.dtype, np.float32)).itemsize
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


# ---------------------------------------------------------------- source
def _side_params(c):
    extra = c.inputs[2:]
    ptrs = "".join(f", x{j}_ptr" for j in range(len(extra)))
    strides = "".join(f", stride_x{j}_{d}" for j, t in enumerate(extra) for d in range(len(t.shape)))
    return ptrs, strides


def contraction_source(c: Contraction, name: str) -> str:
    ptrs, strides = _side_params(c)
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
    ptrs, strides = _side_params(c)
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


_generated = itertools.count(1)


def _compile(source: str, filename: str) -> dict:
    """Run generated source as a module of its own, visible to inspect and tracebacks (under a
    file name of its own: two operators may share a name)."""
    filename = f"{filename[:-1]} #{next(_generated)}>"
    import minitriton as mt
    import minitriton.language as tl
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"mt": mt, "tl": tl, "grouped_tile": gemm_family.grouped_tile, "__name__": filename}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


# ---------------------------------------------------------------- the operators
class Operator:
    """A generated operator: call it on numpy arrays, or make it a Task to tune (it states its
    launch profile, space, shape keys and sketch rules, like a library kernel)."""

    def __init__(self, c, space, default):
        self.c, self.space, self.default = c, space, default
        self.name = c.output.name
        self.__name__ = f"te_{self.name}"
        self.shape_keys = tuple(sorted({v.name for t in c.inputs for s in t.shape for v in te.walk(s)
                                        if isinstance(v, te.Var)}))

    def _tiled(self, main_source):
        """Compile a tiled kernel and rfactor's reduction kernel (its second launch) together."""
        self.main_source, self.reduce_source = main_source, reduce_source(self.c, self.__name__)
        ns = _compile(self.main_source + "\n\n" + self.reduce_source, f"<te.generate {self.__name__}>")
        self.kernel, self.reducer = ns[f"{self.__name__}_kernel"], ns[f"{self.__name__}_reduce"]

    def _size(self, s, shape):
        if isinstance(s, te.Var):
            if s.name not in shape:
                raise TypeError(f"{self.name}: the shape needs {s.name}")
            return int(shape[s.name])
        return int(s)

    def _bind(self, arrays):
        """The sizes the arrays give the te.vars, checked against the inputs' shapes and types."""
        inputs = self.c.inputs
        if len(arrays) != len(inputs):
            raise TypeError(f"{self.name}: expects {len(inputs)} arrays ({', '.join(t.name for t in inputs)}), "
                            f"got {len(arrays)}")
        env = {}
        for t, x in zip(inputs, arrays):
            if not isinstance(x, np.ndarray) or x.ndim != len(t.shape):
                raise ValueError(f"{self.name}: {t.name} must be a {len(t.shape)}-D numpy array, got "
                                 f"{getattr(x, 'shape', type(x).__name__)}")
            if x.dtype != np.dtype(_NP.get(t.dtype, np.float32)):
                raise TypeError(f"{self.name}: {t.name} must be {t.dtype}, got {x.dtype}")
            for s, n in zip(t.shape, x.shape):
                if isinstance(s, te.Var):
                    if env.setdefault(s.name, n) != n:
                        raise ValueError(f"{self.name}: {s.name} is {env[s.name]} by one input and {n} by {t.name}")
                elif s != n:
                    raise ValueError(f"{self.name}: {t.name} has {n} where its shape says {s}")
        return env

    def reference(self, *arrays):
        """The computation in float64 numpy, straight from the expression (the numbers' check)."""
        return evaluate(self.c.output, dict(zip(self.c.inputs, arrays)))

    def autotuned(self, tuner="ansor", budget=256, seed=0, device=None, cache_dir=None, bucket=("M",)):
        """This operator tuned lazily, as `@autotune` tunes a kernel: the first call at a new
        shape (sizes named in `bucket` rounded up to a power of two) tunes a Task of it, and the
        best config is kept in memory and in the disk cache (keyed by the generated source)."""
        return AutotunedOperator(self, tuner, budget, seed, device, cache_dir, tuple(bucket))

    def __repr__(self):
        return f"Operator({self.name}: {self.c.output.body!r})"


class AutotunedOperator:
    def __init__(self, op, tuner, budget, seed, device, cache_dir, bucket):
        self.op, self.tuner, self.budget, self.seed, self.bucket = op, tuner, budget, seed, bucket
        self.device, self.cache_dir = device, cache_dir
        self.configs: dict = {}
        self.last_tuning = None

    def config_for(self, shape: dict) -> Config:
        import minitriton as mt
        from .cache import TuningCache, digest, enabled, refresh
        from .driver import tune
        from .task import Task
        at = {k: (mt.next_power_of_2(v) if k in self.bucket else v) for k, v in sorted(shape.items())}
        key = tuple(at.items())
        if key in self.configs:
            return self.configs[key]
        task = Task(self.op, device=self.device, **at)
        settings = dict(tuner=self.tuner, budget=self.budget, seed=self.seed)
        sources = [getattr(self.op, a) for a in ("source", "main_source", "reduce_source") if hasattr(self.op, a)]
        ckey = digest(self.op.__name__, sources, task.device.fingerprint, settings, list(key))
        if not enabled():
            self.last_tuning = result = tune(task, self.tuner, self.budget, self.seed, key=ckey)
            best = result.best_config
        else:
            disk = TuningCache(self.cache_dir)
            with disk.lock(ckey):
                entry = None if refresh() else disk.get(ckey)
                if entry is not None:
                    c = entry["config"]
                    best = Config(c["kwargs"], num_warps=c["num_warps"], num_stages=c["num_stages"])
                else:
                    self.last_tuning = result = tune(task, self.tuner, self.budget, self.seed, log=disk.log, key=ckey)
                    best = result.best_config
                    disk.put(ckey, dict(kernel=self.op.__name__, args=repr(key), device=repr(task.device),
                                        settings=settings, config={"kwargs": best.kwargs,
                                                                   "num_warps": best.num_warps,
                                                                   "num_stages": best.num_stages},
                                        time=result.best_time, measured=result.measured))
            disk.close()
        self.configs[key] = best
        return best

    def __call__(self, *arrays, out=None):
        return self.op(*arrays, config=self.config_for(self.op._bind(arrays)), out=out)


class GemmOperator(Operator):
    def __init__(self, c: Contraction):
        super().__init__(c, Space(SPACE), DEFAULT)
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
            split = [1] if name == "tiled" else [v for v in SPACE["SPLIT_K"] if v > 1]
            space = Space({**SPACE, "SPLIT_K": split})
            out.append(Sketch(name, ("multi-level tiling",) + (("rfactor",) if split != [1] else ()), space, src))
        return out

    # -- profile ---------------------------------------------------------------------------------------
    def launch_profile(self, shape, cfg):
        dims = {d: self._size(self.c.sizes[d], shape) for d in ("M", "N", "K")}
        item = np.dtype(_NP[self.c.dtype_in]).itemsize
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
        sa, sb = _strides(a), _strides(b)
        stride_am, stride_ak = sa[c.a_dims[0]], sa[c.a_dims[1]]
        stride_bk, stride_bn = sb[c.b_dims[0]], sb[c.b_dims[1]]
        side = list(arrays[2:])
        side_strides = [s for x in side for s in _strides(x)]
        batched = c.batch is not None
        y = np.empty(((Bt,) if batched else ()) + (M, N), _NP[c.dtype_out]) if out is None else out
        sy = _strides(y)
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
            sw = _strides(ws)
            self.kernel[grid](*operands, ws, *side, *k_strides, sw[0], *sw[-2:],
                              *batch_strides(sw[1] if batched else 0), *side_strides, **meta)
            self.reducer[(-(-M // REDUCE_BLOCK), -(-N // REDUCE_BLOCK), Bt)](
                ws, y, *side, M, N, sw[0], *sw[-2:], *sy[-2:], *((sw[1], sy[0]) if batched else ()), *side_strides,
                SPLIT_K=meta["SPLIT_K"], BLOCK_M=REDUCE_BLOCK, BLOCK_N=REDUCE_BLOCK)
        return y


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
        body = _inline(output.body)
        reds = _reductions(body, [])
        if len(output.shape) != 4 or len(reds) != 1 or len(reds[0].axes) != 3 or reds[0].kind != "sum":
            raise Unsupported(f"{output.name} = {body!r}: not a 2-D convolution (a 4-D NHWC output summed over "
                              f"three axes)")
        red = reds[0]
        prod = _strip_casts(red.body)
        if not (isinstance(prod, te.Binary) and prod.op == "*"):
            raise Unsupported(f"{red!r}: the reduced expression is not a product of input and filter")
        n, oh, ow, f = output.axes
        x, w = _strip_casts(prod.a), _strip_casts(prod.b)
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
            cond, x = x.cond, _strip_casts(x.then)
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
    ptrs, strides = _side_params(c)
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


class RowWise:
    """Y[m, n] = an element-wise expression of one input's row X[m, :] and of reductions over
    that row (softmax: max, exp-sum, normalise): one program holds ROWS whole rows."""

    def __init__(self, output: te.Compute):
        if len(output.shape) != 2:
            raise Unsupported(f"{output.name}: a row-wise computation has a 2-D output")
        self.output = output
        self.m, self.n = output.axes
        self.body = _inline(output.body)
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
        self.kernel = _compile(self.source, f"<te.generate {self.__name__}>")[f"{self.__name__}_kernel"]

    def sketch_rules(self, shape, space):
        from .sketch import Decision
        return [Decision("row-wise, fused stages", "always inline + simple reduction", True,
                         f"each stage of {self.name} reads whole rows: the row stays in one program across them",
                         space, self.source)]

    @property
    def sketches(self):
        return [Sketch("row-wise, fused stages", ("always inline", "simple reduction"), self.space, self.source)]

    def launch_profile(self, shape, cfg):
        dims = {d: self._size(self.c.sizes[d], shape) for d in ("M", "N")}
        return rowsoftmax_family.launch_profile(dims, cfg, np.dtype(_NP[self.c.dtype_in]).itemsize, ops=self.c.ops,
                                                row_ops=self.c.row_ops,
                              names=(f"{self.__name__}_kernel",),
                              out_itemsize=np.dtype(_NP[self.c.dtype_out]).itemsize)

    def __call__(self, x, config=None, out=None):
        import minitriton as mt
        env = self._bind((x,))
        M, N = (self._size(self.c.sizes[d], env) for d in ("M", "N"))
        block = mt.next_power_of_2(N)
        if block > 1 << 20:
            raise Unsupported(f"{self.name}: rows of {N} do not fit one block (at most 2^20 elements)")
        cfg = as_config(config or self.default)
        rows = {**self.default.kwargs, **cfg.kwargs}["ROWS"]
        (_, layout), = self.c.tensors
        sx = _strides(x)
        y = np.empty((M, N), _NP[self.c.dtype_out]) if out is None else out
        self.kernel[(-(-M // rows),)](x, y, M, N, sx[layout[0]], sx[layout[1]], *_strides(y), BLOCK=block,
                                      ROWS=rows, num_warps=cfg.num_warps, num_stages=cfg.num_stages)
        return y


class RowReduction:
    """R[m] = sum or max over r of X[m, r] (or X[r, m]), then an optional cast."""

    def __init__(self, output: te.Compute):
        if len(output.shape) != 1:
            raise Unsupported(f"{output.name} = {output.body!r}: a reduction is generated for 1-D outputs of 2-D "
                              f"inputs so far")
        body = _inline(output.body)
        red = _reductions(body, [])[0]
        if len(red.axes) != 1:
            raise Unsupported(f"{red!r}: a reduction over one axis is generated so far")
        if _strip_casts(body) is not red:
            raise Unsupported(f"{output.name} = {body!r}: only a cast may follow a reduction so far")
        x = _strip_casts(red.body)
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
        ns = _compile(self.source, f"<te.generate {self.__name__}>")
        self.kernel, self.partials = ns[f"{self.__name__}_kernel"], ns[f"{self.__name__}_partials"]

    def sketch_rules(self, shape, space):
        from .sketch import reduction_rules
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
        return rowsum_family.launch_profile(dims, cfg, np.dtype(_NP[self.c.dtype_in]).itemsize,
                                            names=(f"{self.__name__}_kernel", f"{self.__name__}_partials"))

    def __call__(self, x, config=None, out=None):
        c = self.c
        env = self._bind((x,))
        M, N = (self._size(c.sizes[d], env) for d in ("M", "N"))
        cfg = as_config(config or self.default)
        kw = {**self.default.kwargs, **cfg.kwargs}
        sx = _strides(x)
        y = np.empty(M, _NP[c.dtype_out]) if out is None else out
        split = kw["SPLIT"]
        meta = dict(BLOCK_N=kw["BLOCK_N"], SPLIT=split, num_warps=cfg.num_warps, num_stages=cfg.num_stages)
        if split == 1:
            self.kernel[(M, 1)](x, y, N, sx[c.dims[0]], sx[c.dims[1]], _strides(y)[0], 0, **meta)
        else:
            ws = np.empty((M, split), np.float32)
            self.kernel[(M, split)](x, ws, N, sx[c.dims[0]], sx[c.dims[1]], split, 1, **meta)
            self.partials[(-(-M // 16),)](ws, y, M, split, BLOCK_M=16, SPLIT=split)
        return y


class ConvOperator(Operator):
    def __init__(self, c: Conv2D):
        super().__init__(c, Space(SPACE), DEFAULT)
        self._tiled(conv_source(c, self.__name__))

    def dims(self, shape):
        """N, H, W, C, F, KH, KW, stride, padding, and the implicit GEMM's M, N, K."""
        x, w = self.c.x.tensor.shape, self.c.w.tensor.shape
        n, h, wd, ch = (_value(s, shape) for s in x)
        kh, kw, _, f = (_value(s, shape) for s in w)
        (sh, sw), (ph, pw) = self.c.stride, self.c.padding
        oh, ow = (h + 2 * ph - kh) // sh + 1, (wd + 2 * pw - kw) // sw + 1
        declared = (_value(self.c.output.shape[1], shape), _value(self.c.output.shape[2], shape))
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
        return conv_family.launch_profile(d, cfg, np.dtype(_NP[self.c.dtype_in]).itemsize,
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
        side_strides = [s for a in side for s in _strides(a)]
        y = np.empty((n, oh, ow, f), _NP[self.c.dtype_out]) if out is None else out
        y2 = y.reshape(M, f)
        meta = dict(BLOCK_M=kw["BLOCK_M"], BLOCK_N=kw["BLOCK_N"], BLOCK_K=kw["BLOCK_K"], GROUP_M=kw["GROUP_M"],
                    SPLIT_K=kw["SPLIT_K"], num_warps=cfg.num_warps, num_stages=cfg.num_stages)
        grid = (-(-M // meta["BLOCK_M"]) * -(-f // meta["BLOCK_N"]), meta["SPLIT_K"])
        common = (d["H"], d["W"], d["C"], f, oh, ow, d["KW"], M, K, *d["stride"], *d["padding"], *_strides(x),
                  *_strides(w2))
        if meta["SPLIT_K"] == 1:
            self.kernel[grid](x, w2, y2, *side, *common, 0, *_strides(y2), *side_strides, **meta)
        else:
            ws = np.empty((meta["SPLIT_K"], M, f), np.float32)
            self.kernel[grid](x, w2, ws, *side, *common, *_strides(ws), *side_strides, **meta)
            self.reducer[(-(-M // REDUCE_BLOCK), -(-f // REDUCE_BLOCK))](
                ws, y2, *side, M, f, *_strides(ws), *_strides(y2), *side_strides, SPLIT_K=meta["SPLIT_K"],
                BLOCK_M=REDUCE_BLOCK, BLOCK_N=REDUCE_BLOCK)
        return y


def _value(s, env):
    """A size's value: an int, a te.var bound in `env`, or arithmetic on them."""
    if isinstance(s, int):
        return s
    if isinstance(s, te.Const):
        return s.value
    if isinstance(s, te.Var):
        if s.name not in env:
            raise TypeError(f"the shape needs {s.name}")
        return int(env[s.name])
    if isinstance(s, te.Binary):
        a, b = _value(s.a, env), _value(s.b, env)
        if s.op in ("//", "/"):
            return a // b
        return a + b if s.op == "+" else a - b if s.op == "-" else a * b
    raise TypeError(f"{s!r} is not a size")


def _strides(x):
    return tuple(s // x.itemsize for s in x.strides)


def evaluate(t: te.Tensor, bound: dict) -> np.ndarray:
    """A tensor's values in float64, by numpy over its whole index space (small sizes only)."""
    if isinstance(t, te.Placeholder):
        return np.asarray(bound[t], np.float64)
    sizes = {}
    for p, x in bound.items():
        for s, n in zip(p.shape, x.shape):
            if isinstance(s, te.Var):
                sizes[s.name] = n
    shape = tuple(_value(s, sizes) for s in t.shape)
    grids = np.meshgrid(*(np.arange(n) for n in shape), indexing="ij")
    env = {id(a): g for a, g in zip(t.axes, grids)}
    return np.broadcast_to(_eval(t.body, env, bound, sizes), shape).astype(np.float64)


_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "//": np.floor_divide}


def _eval(e, env, bound, sizes):
    if isinstance(e, te.Const):
        return e.value
    if isinstance(e, te.Var):
        return env[id(e)] if id(e) in env else _value(e, sizes)
    if isinstance(e, te.Binary):
        return _BINARY[e.op](_eval(e.a, env, bound, sizes), _eval(e.b, env, bound, sizes))
    if isinstance(e, te.Compare):
        a, b = _eval(e.a, env, bound, sizes), _eval(e.b, env, bound, sizes)
        return np.less(a, b) if e.op == "<" else np.less_equal(a, b)
    if isinstance(e, te.All):
        return np.logical_and.reduce([np.asarray(_eval(c, env, bound, sizes)) for c in e.conds])
    if isinstance(e, te.IfThenElse):
        cond = _eval(e.cond, env, bound, sizes)
        return np.where(cond, _eval(e.then, env, bound, sizes), _eval(e.otherwise, env, bound, sizes))
    if isinstance(e, te.Call):
        x = np.asarray(_eval(e.arg, env, bound, sizes), np.float64)
        if e.fn == "relu":
            return np.maximum(x, 0.0)
        if e.fn == "exp":
            return np.exp(x)
        if e.fn == "gelu":
            from math import erf, sqrt
            return 0.5 * x * (1.0 + np.vectorize(erf)(x / sqrt(2.0)))
        return x.astype(_NP.get(e.dtype, np.float32)).astype(np.float64)
    if isinstance(e, te.Access):
        values = evaluate(e.tensor, bound) if isinstance(e.tensor, te.Compute) else np.asarray(bound[e.tensor], np.float64)
        # indices outside the tensor are read only where a condition discards them: clipped
        idx = tuple(np.clip(np.asarray(_eval(i, env, bound, sizes)), 0, n - 1) for i, n in zip(e.index, values.shape))
        return values[idx]
    if isinstance(e, te.Reduce):
        import itertools
        extents = [_value(a.extent, sizes) for a in e.axes]
        parts = None
        for point in itertools.product(*(range(n) for n in extents)):
            for a, r in zip(e.axes, point):
                env[id(a)] = r
            v = np.asarray(_eval(e.body, env, bound, sizes), np.float64)
            parts = v if parts is None else (parts + v if e.kind == "sum" else np.maximum(parts, v))
        for a in e.axes:
            del env[id(a)]
        return parts
    raise Unsupported(f"{e!r}")


def generate(output) -> Operator:
    if not isinstance(output, te.Compute):
        raise TypeError(f"te.generate: expects the output of te.compute, got {output!r}")
    reds = _reductions(_inline(output.body), [])
    products = [r for r in reds if isinstance(_strip_casts(r.body), te.Binary) and _strip_casts(r.body).op == "*"]
    if len(output.shape) == 1 and len(reds) == 1 and not products:
        return ReductionOperator(RowReduction(output))
    if len(output.shape) == 4:
        return ConvOperator(Conv2D(output))
    if len(output.shape) == 2 and reds and len(products) < len(reds):
        return RowWiseOperator(RowWise(output))
    if not reds:
        raise Unsupported(f"{output.name} = {output.body!r}: an element-wise computation alone is not generated "
                          f"(fuse it into a reduction's output, as an epilogue)")
    return GemmOperator(Contraction(output))


te.generate = generate   # `te.generate(C)`: the expression language (below) offers what is built on it here
