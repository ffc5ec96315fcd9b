"""`triton.compile(triton.compiler.ASTSource(fn, signature, constexprs))`: what Triton's compiler
entry point refuses, refused here.

Triton compiles a kernel for a signature (`{"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}`)
and raises CompilationError for what its front end cannot type.  minitriton compiles nothing: it
runs the kernel's first program with the signature's kinds of values (arguments of each type
with a placeholder value, pointers to a small zeroed array, constexprs as given) and its writes
dropped, as a `warmup` launch does, so a kernel that Triton refuses fails here with the same
kind of error.  The placeholder arrays are not the real ones: an access outside them says
nothing about the kernel, so it is not an error of compiling.
"""
from __future__ import annotations

import numpy as np

import types

from .. import dtypes as D
from ..hypogpu.trace import trace
from ..jit import JITFunction
from ..memory import OutOfBoundsError
from ..tensor import FROM_ABOVE

PLACEHOLDER_ELEMENTS = 4096


class ASTSource:
    """A @jit function with the signature (parameter name -> Triton type string) and the
    constexpr values (by name) to compile it for."""

    def __init__(self, fn, signature, constexprs=None, attrs=None):
        if not isinstance(fn, JITFunction):
            raise TypeError(f"ASTSource: fn must be a @jit function, got {fn!r}")
        if not isinstance(signature, dict):
            raise TypeError(f"ASTSource: signature must be a dict of parameter name -> type string, got {signature!r}")
        self.fn, self.signature, self.constexprs, self.attrs = fn, dict(signature), dict(constexprs or {}), attrs
        unknown = [k for k in list(self.signature) + list(self.constexprs) if k not in fn.arg_names]
        if unknown:
            raise ValueError(f"ASTSource: {unknown} are not parameters of '{fn.__name__}' ({fn.arg_names})")
        self.name = fn.__name__


class CompiledKernel:
    """What `compile` returns: the source it checked (minitriton keeps no binary)."""

    def __init__(self, src: ASTSource):
        self.src, self.name = src, src.name
        self.metadata = {"name": src.name, "signature": dict(src.signature), "constexprs": dict(src.constexprs)}
        self.asm = {}


class WarmedKernel:
    """What `kernel.warmup(*args, grid=..., **meta)` returns, as Triton returns its compiled kernel
    (tutorial 02 reads its registers and shared memory to size a persistent grid, then launches
    it): `n_regs` per thread and `metadata.shared` bytes as HypoGPU estimates them for this launch
    (traced, nothing runs), no spills, and `kernel[grid](*runtime_args)` launching it with the
    meta-parameters and options it was warmed up with."""

    def __init__(self, fn, args, kwargs):
        self.fn, self.name = fn, fn.__name__
        self.meta = {k: v for k, v in kwargs.items() if k != "warmup"}
        namer = fn.options.get("repr")
        if callable(namer):         # `@triton.jit(repr=f)`: f names the kernel from its specialization
            self.name = str(namer(specialization(fn, args, self.meta)))
        self._args = args
        self._profile = None
        self.n_spills = 0
        self.asm = {}

    def _resources(self):
        if self._profile is None:
            profiles = trace(lambda: self.fn.run(*self._args, grid=(1,), **self.meta))
            self._profile = profiles[0] if profiles else None
        return self._profile

    @property
    def n_regs(self) -> int:
        p = self._resources()
        return int(np.max(p.regs)) if p is not None else 32

    @property
    def metadata(self):
        p = self._resources()
        shared = int(np.max(np.asarray(p.smem_stage) * np.maximum(np.asarray(p.num_stages), 1))) if p else 0
        return types.SimpleNamespace(name=self.name, shared=shared, num_warps=self.meta.get("num_warps", 4),
                                     num_stages=self.meta.get("num_stages", 3))

    def _init_handles(self):
        """(Triton loads the binary onto the device here; there is none.)"""

    def __getitem__(self, grid):
        def launch(*args):
            # Triton's compiled kernel takes every parameter by position, constexprs included
            # (tutorial 02 passes BLOCK_SIZE and num_stages last): those given so are not passed twice
            given = set(list(self.fn.signature.parameters)[:len(args)])
            return self.fn.run(*args, grid=grid, **{k: v for k, v in self.meta.items() if k not in given})
        return launch


def type_name(dt) -> str:
    """Triton's spelling of an element type in signatures: i1, i32, u64, fp16, bf16, fp8e4nv, ..."""
    name = dt.name
    return "u" + name[4:] if name.startswith("uint") else "i" + name[3:] if name.startswith("int") else name


def _argument_type(value) -> str:
    """The signature type Triton gives a launch argument: ints by the narrowest of i32, i64, u64
    that holds them, floats fp32, arrays a pointer to their element type."""
    if isinstance(value, (bool, np.bool_)):
        return "i1"
    if isinstance(value, (int, np.integer)):
        v = int(value)
        return "i32" if -2 ** 31 <= v < 2 ** 31 else "i64" if -2 ** 63 <= v < 2 ** 63 else "u64"
    if isinstance(value, (float, np.floating)):
        return "fp32"
    if value is None:
        return "constexpr"
    dtype = getattr(value, "dtype", None)
    return "*" + type_name(D.from_numpy(dtype)) if dtype is not None else type(value).__name__


def specialization(fn, args, meta) -> types.SimpleNamespace:
    """What Triton hands a kernel's `repr=` function: `signature` (parameter -> type, constexpr
    for compile-time values) and `constants` (parameter -> value: constexprs, and integer
    arguments equal to 1, which Triton specializes on)."""
    bound = fn.bind(args, {k: v for k, v in meta.items() if k in fn.signature.parameters})
    signature, constants = {}, {}
    for name, value in bound.items():
        if name in fn.constexprs or value is None:
            signature[name], constants[name] = "constexpr", D.constexpr_value(value)
            continue
        signature[name] = _argument_type(value)
        if type(value) is int and value == 1 and name not in fn.unspecialized:
            constants[name] = 1
    return types.SimpleNamespace(signature=signature, constants=constants)


def _placeholder(kind: str):
    """A value of the Triton type `kind` ("i32", "fp16", "*fp32", "constexpr", ...)."""
    if kind.startswith("*"):
        name = kind.lstrip("*k")
        name = {"i1": "int1"}.get(name, f"int{name[1:]}" if name[:1] == "i" else
                                  f"uint{name[1:]}" if name[:1] == "u" else name)
        found = [d for d in D.ALL if d.name == name]
        if not found:
            raise ValueError(f"compile: unknown pointer type {kind!r} in the signature")
        return np.zeros(PLACEHOLDER_ELEMENTS, found[0].np)
    if kind in ("i1", "u1"):
        return True
    if kind[0] in "iu":
        return 1
    if kind.startswith(("fp", "bf")):
        return 1.0
    raise ValueError(f"compile: unknown type {kind!r} in the signature")


def compile(src, target=None, options=None):
    """Check `src` as Triton's compiler would (see the module's docstring); returns a
    CompiledKernel, or raises the kernel's CompilationError."""
    if not isinstance(src, ASTSource):
        raise TypeError(f"compile: expected a triton.compiler.ASTSource, got {type(src).__name__}")
    fn = src.fn
    args = {}
    for name, param in fn.signature.parameters.items():
        if name in src.constexprs:
            args[name] = src.constexprs[name]
        elif name in src.signature and src.signature[name] != "constexpr":
            args[name] = _placeholder(src.signature[name])
        elif param.default is not param.empty:
            continue
        elif name in src.signature:
            raise ValueError(f"compile: constexpr parameter '{name}' of '{fn.__name__}' has no value in constexprs")
        else:
            raise ValueError(f"compile: parameter '{name}' of '{fn.__name__}' is in neither signature nor constexprs")
    try:
        fn.warmup(grid=(1,), **args)
    except OutOfBoundsError:
        pass            # the placeholder arrays are smaller than the real ones
    return CompiledKernel(src)


FROM_ABOVE.update(warmed=WarmedKernel)       # for JITFunction.warmup
