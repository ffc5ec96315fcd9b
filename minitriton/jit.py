"""`@jit` kernels and their launches: `kernel[grid](*args, **meta)`.

A launch first runs every program in lockstep: the kernel body executes once, and each value
holds one row per program.  If control flow turns out to depend on the program id (an `if`
or loop bound that differs between programs), the launch restarts and runs the programs one
at a time, in order.  Both give the same bits.  Stores land in private copies that are
written back only when the whole launch succeeded.
"""
from __future__ import annotations

import builtins
import contextlib
import dis
import functools
import hashlib
import inspect
import math
import os
import threading
import types

import numpy as np

from . import aggregates, binding, context, cooperative, counting, errors, knobs, launch_hooks, lowering
from . import dtypes as D
from .addresses import AddressSpace
from .storage import bind_buffers
from .memory import argument_pointer
from .tensor import FROM_ABOVE, Divergent, MemoryPressure, Stalled, argument, constexpr, tensor
from .elementwise import minimum, maximum
from .debug import kernel_print
from .ranges import Range
from .interface import KernelInterface

# compile options of Triton's NVIDIA and AMD backends that tune the code a GPU runs and change no
# value: a launch takes them (a kernel written for one backend runs here unchanged) and they do nothing
BACKEND_HINTS = ("cluster_dims", "waves_per_eu", "matrix_instr_nonkdim", "kpack", "schedule_hint",
                 "instruction_sched_variant", "allow_flush_denorm", "extern_libs", "sanitize_overflow",
                 "ptx_options", "instrumentation_mode", "num_buffers_warp_spec", "num_consumer_groups",
                 "reg_dec_producer", "reg_inc_consumer")
# `device` and `device_type` are Triton 2.x's launch arguments (its run() took them with `stream`);
# kernels written then (lmdeploy's, vLLM's older ones) still pass them
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "stream", "warmup",
                  "debug", "launch_cooperative_grid", "launch_pdl", "ir_override", "device", "device_type") + BACKEND_HINTS
# programs per lockstep chunk: bounds memory for very large grids.  Fewer chunks cost less of
# the body's per-operation Python: on two interleaved sweeps of Triton's tutorials (glibc keeping
# freed memory, benchmarks.common.warm_allocator) no row was slower at 4096 than at 1024, and asin,
# softmax, layer norm and attention 2-7 % faster (an earlier 1024 was chosen while every chunk's
# fresh 16 MB temporaries were faulted in page by page)
LOCKSTEP_ROWS = 4096
MAX_PROGRAMS = 1 << 26  # programs per launch: beyond, the program-id table alone would take gigabytes
# the frames that enter a @jit function's body (errors.kernel_positions): the launch, and a call
# from one @jit function to another
_ENTRIES = {(__file__, "_run_programs"), (__file__, "__call__")}


def _ordered(args, what):
    """Compile-time values min/max may order: Triton refuses a NaN or a negative zero among
    float constants, whose order is not defined."""
    values = [a.value if isinstance(a, constexpr) else a for a in args]
    if any(isinstance(v, float) and (math.isnan(v) or (v == 0 and math.copysign(1, v) < 0)) for v in values):
        raise ValueError(f"{what} of {values!r} is not defined (a NaN or a negative zero), as in Triton")


def _kernel_min(*args, **kw):
    if any(isinstance(a, tensor) for a in args):
        return functools.reduce(minimum, args)
    _ordered(args, "min")
    return builtins.min(*args, **kw)


def _kernel_max(*args, **kw):
    if any(isinstance(a, tensor) for a in args):
        return functools.reduce(maximum, args)
    _ordered(args, "max")
    return builtins.max(*args, **kw)


def _kernel_print(*args, **kw):
    return kernel_print(*args, **kw)


def _kernel_range(*args, **kw):
    return Range(*args, **kw)


# Inside kernels, Python's min/max of tensors mean tl.minimum/tl.maximum, print means
# tl.device_print and range means tl.range, as in Triton.
_KERNEL_BUILTINS = dict(vars(builtins), min=_kernel_min, max=_kernel_max, print=_kernel_print, range=_kernel_range)


def _is_constexpr(annotation):
    return D.is_annotation(annotation, constexpr)


def _code_fingerprint(code) -> str:
    consts = [_code_fingerprint(c) if isinstance(c, types.CodeType) else repr(c) for c in code.co_consts]
    return f"{code.co_code.hex()}|{consts}|{code.co_names}|{code.co_varnames}"


_MISSING = object()


def _helper_key(fn, visiting: set) -> str:
    """A plain Python function a kernel calls (run as Python on the host's values, not jitted):
    its code and what it reads in turn, so that editing it re-tunes the kernels that use it."""
    if id(fn) in visiting:
        return "<recursive>"
    visiting.add(id(fn))
    parts = [_code_fingerprint(fn.__code__)] + _global_deps(fn, visiting)
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def _global_deps(fn, visiting: set) -> list:
    """(name, key) of the globals fn's code reads that decide what it computes: jitted kernels,
    constants, and plain Python helpers (through _helper_key)."""
    deps = []
    for name in sorted(_global_names(fn.__code__)):
        v = fn.__globals__.get(name, _MISSING)
        if isinstance(v, JITFunction):
            deps.append((name, "<recursive>" if id(v) in visiting else v.cache_key(visiting)))
        elif _is_constant(v):
            deps.append((name, repr(v)))
        elif inspect.isfunction(v):
            deps.append((name, _helper_key(v, visiting)))
    return deps


def _loaded_globals(code) -> set:
    """The global names a function's code reads (its comprehensions' too)."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_GLOBAL"}
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _loaded_globals(c)
    return names


def _readable_from_a_kernel(name, v, annotations) -> bool:
    """Triton's rule for a global a @jit function reads: only what cannot change what was
    compiled without it noticing (constexprs, by value or annotation; types; modules; @jit
    functions; the language's own functions and classes; named tuples, aggregates)."""
    if isinstance(v, (constexpr, D.dtype, types.ModuleType, JITFunction, aggregates.constexpr_function)):
        return True
    if D.is_annotation(annotations.get(name), constexpr):
        return True
    module = getattr(v, "__module__", None) or ""
    if module.split(".")[0] in ("minitriton", "triton", "autotune"):
        return True
    return isinstance(v, type) and (issubclass(v, tuple) and hasattr(v, "_fields") or aggregates.is_aggregate_class(v))


def _refuse_outside_names(fn, names):
    """A @jit function that reads a non-constexpr global, or such a variable of a function around
    it, is refused as Triton refuses it: what it read would be compiled in, and a later change
    would go unseen ($TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1 lets them through)."""
    if os.environ.get("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS") == "1":
        return      # (Triton's switch for globals; here it lets the enclosing function's variables through too)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            v = cell.cell_contents
        except ValueError:      # not bound yet: Python says so when it is read
            continue
        if not _readable_from_a_kernel(name, v, {}):
            raise NameError(f"{name} is not defined: a @jit function cannot read a variable of the function it is "
                            f"defined in (as in Triton); make '{name}' a global constexpr or pass it as an argument")
    annotations = fn.__globals__.get("__annotations__", {})
    for name in names:
        v = fn.__globals__.get(name, _MISSING)
        if v is not _MISSING and not _readable_from_a_kernel(name, v, annotations):
            raise NameError(f"Cannot access global variable {name} from within @jit'ed function. Triton kernels can "
                            f"only access global variables that are instantiated as constexpr "
                            f"(`x = triton.language.constexpr(42)`) or annotated `x: triton.language.constexpr = 42`; "
                            f"pass it as an argument, or set TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1")


def _outside_values(fn, names) -> dict:
    """{name: value} of the variables of the functions around `fn` and of the globals `names`."""
    out = {n: fn.__globals__[n] for n in names if n in fn.__globals__}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:      # not bound yet: Python says so when it is read
            continue
    return out


def _compiled_in(fn, names) -> dict:
    """What Triton compiles into a @jit function from outside it: the constexprs (by value or by
    annotation) and types it reads, {name: how it prints}.  A constexpr is mutable (`cst.value = 43`), so how it reads is
    kept, not the object."""
    annotations = fn.__globals__.get("__annotations__", {})
    return {n: repr(v) for n, v in _outside_values(fn, names).items()
            if isinstance(v, (constexpr, D.dtype)) or D.is_annotation(annotations.get(n), constexpr)}


def _global_names(code) -> set:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _global_names(c)
    return names


def _is_constant(v) -> bool:
    if isinstance(v, constexpr):
        v = v.value
    if isinstance(v, tuple):
        return all(_is_constant(x) for x in v)
    return isinstance(v, (bool, int, float, str, bytes, type(None), np.generic))


class JITFunction(KernelInterface):
    def __init__(self, fn, **options):
        self.fn = fn
        self.options = options
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn
        self.signature = inspect.signature(fn)
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in self.signature.parameters.values()):
            raise TypeError(f"JIT functions do not support **kwargs ({fn.__name__}), as in Triton")
        self.arg_names = list(self.signature.parameters)
        self.constexprs = [n for n, p in self.signature.parameters.items() if _is_constexpr(p.annotation)]
        self.consts = {n for n, p in self.signature.parameters.items() if D.is_annotation(p.annotation, D.const)}
        # scalar parameters typed by their annotation (`v: tl.uint8`), not by the value passed
        self.annotated = {n: t for n, p in self.signature.parameters.items()
                          if n not in self.constexprs and (t := D.annotated_type(p.annotation)) is not None}
        self.unspecialized = self._unspecialized(options.get("do_not_specialize") or ())
        self.last_launch = None
        self.pre_run_hooks = []
        self._compiled = None   # {name: repr} of what it read from outside at its first call
        # (grid, constexprs) -> (programs per lockstep group, why): a launch that stalled on a
        # lock once starts the next time at the group size that ran, instead of running every
        # program up to the lock before finding out again
        self._groups = {}

    def _unspecialized(self, names) -> frozenset:
        """`do_not_specialize`: parameters (names or positions) passed as runtime scalars even when
        equal to 1, which Triton otherwise compiles in as a constant."""
        names, params = ((names,) if isinstance(names, (str, int)) else names), self.arg_names
        bad = [n for n in names if not (n in params if isinstance(n, str) else
                                        type(n) is int and 0 <= n < len(params))]
        if bad:
            raise ValueError(f"@jit({self.__name__}): do_not_specialize names no parameter: {bad[0]!r} "
                             f"(the parameters are {params})")
        return frozenset(n if isinstance(n, str) else params[n] for n in names)

    @functools.cached_property
    def src(self) -> str:
        """The kernel's source (what caches key on); for a kernel with no source file (built
        with exec, typed in a REPL) a fingerprint of its bytecode stands in."""
        try:
            return inspect.getsource(self.fn)
        except (OSError, TypeError):
            return f"<no source: {self.fn.__qualname__}> " + _code_fingerprint(self.fn.__code__)

    def __repr__(self):
        return f"JITFunction({self.fn.__module__}:{self.fn.__qualname__})"

    def cache_key(self, _visiting=None) -> str:
        """A hash of the kernel's source and of what it depends on: the jitted functions it
        calls (recursively) and the global constants it reads, as Triton's cache key does.
        Computed afresh each time (globals may be rebound between calls)."""
        visiting = set() if _visiting is None else _visiting
        visiting.add(id(self))
        deps = _global_deps(self.fn, visiting)
        for name, cell in zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ()):
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            if isinstance(v, JITFunction) and id(v) not in visiting:
                deps.append((name, v.cache_key(visiting)))
            elif _is_constant(v):
                deps.append((name, repr(v)))
        return hashlib.sha256((self.src + repr(deps)).encode()).hexdigest()

    # -- launching ----------------------------------------------------------------------
    def __get__(self, obj, owner=None):
        """A @jit function in an aggregate's class body, called on an instance, gets the
        instance as its first argument (a kernel kept as another class's attribute stays the
        kernel, launchable with [grid])."""
        return functools.partial(self, obj) if obj is not None and aggregates.is_aggregate(obj) else self

    def __call__(self, *args, **kwargs):
        if not context.active():
            raise RuntimeError(f"kernel '{self.__name__}' must be launched with a grid: {self.__name__}[grid](...)")
        return self._body()(*args, **kwargs)

    @functools.cached_property
    def lowered(self):
        """The kernel's code with control flow lowered to masks (lowering.py), or None."""
        return lowering.lower(self.fn)

    @functools.cached_property
    def _read_globals(self):
        return sorted(_loaded_globals(self.fn.__code__))

    def _check_compiled_in(self):
        """Triton compiles a kernel with the constexprs and types it reads from outside it, and
        refuses a launch after one of them changed (the compiled kernel would run the old value):
        the first call keeps them, every later one compares."""
        if self._compiled is None:
            self._compiled = _compiled_in(self.fn, self._read_globals)
            return
        now = _outside_values(self.fn, list(self._compiled))
        for name, was in self._compiled.items():
            if repr(now.get(name)) != was:
                raise RuntimeError(f"Global variable {name} has changed since we compiled this kernel, from {was} "
                                   f"to {now.get(name)!r}")

    def _body(self):
        self._check_compiled_in()
        _refuse_outside_names(self.fn, self._read_globals)
        g = dict(self.fn.__globals__)
        g["__builtins__"] = _KERNEL_BUILTINS
        code = self.lowered
        if code is None:
            return types.FunctionType(self.fn.__code__, g, self.fn.__name__, self.fn.__defaults__, self.fn.__closure__)
        cells = dict(zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ()))
        # the lowered code is compiled inside a function that defines it, so a kernel that calls
        # itself by name (recursion bounded by a constexpr) sees that name as a free variable:
        # it means the global, the jitted kernel, as in the original code
        for name in code.co_freevars:
            if name not in cells:
                if name not in g:
                    raise NameError(f"kernel '{self.__name__}': name {name!r} is not defined")
                cells[name] = types.CellType(g[name])
        f = types.FunctionType(code, lowering.namespace(g), self.fn.__name__, self.fn.__defaults__,
                               tuple(cells[n] for n in code.co_freevars) or None)
        f.__kwdefaults__ = self.fn.__kwdefaults__
        return f

    def bind(self, args, kwargs):
        """Bound arguments by name, with a clear error for a wrong call."""
        unknown = [k for k in kwargs if k not in self.signature.parameters]
        if unknown:
            raise TypeError(f"kernel '{self.__name__}' got unexpected keyword argument(s) {unknown}; "
                            f"its parameters are {self.arg_names}")
        if len(args) > len(self.arg_names):
            raise TypeError(f"kernel '{self.__name__}' takes {len(self.arg_names)} arguments "
                            f"({', '.join(self.arg_names)}) but {len(args)} were given")
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            missing = [n for n in self.arg_names[len(args):]
                       if n not in kwargs and self.signature.parameters[n].default is inspect.Parameter.empty]
            if missing:
                kinds = ["constexpr " + n if n in self.constexprs else n for n in missing]
                raise TypeError(f"kernel '{self.__name__}' is missing argument(s): {', '.join(kinds)}") from None
            raise TypeError(f"kernel '{self.__name__}': {e}") from None
        bound.apply_defaults()
        return dict(bound.arguments)

    def add_pre_run_hook(self, hook):
        """Call `hook(*args, **kwargs)` with a launch's arguments before it runs, every launch, as
        Triton's JITFunction does (a framework refusing arguments of its own types, say)."""
        if not callable(hook):
            raise TypeError(f"kernel '{self.__name__}': add_pre_run_hook needs a callable, got {hook!r}")
        self.pre_run_hooks.append(hook)

    def run(self, *args, grid, **kwargs):
        for hook in self.pre_run_hooks:
            hook(*args, **kwargs)
        # launch options; one that is also a kernel parameter (Triton's tutorials do this with
        # num_stages) goes to both
        options = {k: kwargs[k] for k in LAUNCH_OPTIONS if k in kwargs}
        for k in options:
            if k not in self.signature.parameters:
                del kwargs[k]
        if options.get("ir_override") is not None:
            raise NotImplementedError(f"kernel '{self.__name__}': ir_override (a Triton IR or PTX file replacing the "
                                      f"compiled kernel) is not supported by minitriton, which compiles no IR")
        warps = options.get("num_warps", 4)
        if isinstance(warps, bool) or not isinstance(warps, (int, np.integer)) or warps < 1 or warps & (warps - 1):
            raise errors.LaunchOptionError(f"kernel '{self.__name__}': num_warps must be a power of 2 (as in Triton), got {warps!r}")
        bound = self.bind(args, kwargs)
        grid = self._grid(grid, bound)
        self.last_launch = dict(grid=grid, args=bound, num_warps=options.get("num_warps", 4),
                                num_stages=options.get("num_stages", 3))
        if not launch_hooks.compiled(self, bound, options, bool(options.get("warmup"))) or math.prod(grid) == 0:
            return None
        # Triton's warmup compiles without running; here the body runs once, as the first program,
        # and its writes are dropped: what Triton refuses when it compiles (a static_assert, a type
        # error) is refused by a warmup here too
        debug = options["debug"] if options.get("debug") is not None else self.options.get("debug")
        entered = launch_hooks.enter(self, grid, bound, options)
        with context.debugging(bool(debug) or bool(knobs.runtime.debug)):    # TRITON_DEBUG turns it on for all
            self._execute(bound, grid, options, check_only=bool(options.get("warmup")))
        launch_hooks.leave(entered)

    def warmup(self, *args, grid, **kwargs):
        """Triton's warmup: the kernel checked for these arguments (see run) and, as Triton returns
        its compiled kernel, an object to read its resources from and launch it by (compiler/source.py)."""
        self.run(*args, grid=grid, warmup=True, **kwargs)
        warmed = FROM_ABOVE.get("warmed")
        return warmed(self, args, kwargs) if warmed is not None else None

    def _grid(self, grid, bound):
        if callable(grid):
            grid = grid(dict(bound))
        if isinstance(grid, (int, np.integer)):
            grid = (grid,)
        if not isinstance(grid, (tuple, list)) or not 1 <= len(grid) <= 3:
            raise ValueError(f"kernel '{self.__name__}': grid must be a tuple of 1 to 3 ints (or a callable "
                             f"returning one), got {grid!r}")
        out = []
        for g in grid:
            if isinstance(g, constexpr):
                g = g.value
            if not isinstance(g, (int, np.integer)) or g < 0:
                raise ValueError(f"kernel '{self.__name__}': grid entries must be non-negative ints, got {grid!r}")
            out.append(int(g))
        out = tuple(out) + (1,) * (3 - len(out))
        if out[0] >= 2 ** 31 or out[1] >= 2 ** 16 or out[2] >= 2 ** 16:
            raise ValueError(f"kernel '{self.__name__}': grid too large: {out} (as on a GPU, the grid's x must be "
                             f"below 2**31 and its y and z below 2**16)")
        if math.prod(out) > MAX_PROGRAMS:
            raise ValueError(f"kernel '{self.__name__}': grid too large: {out} is {math.prod(out):,} programs; the "
                             f"CPU executor runs at most {MAX_PROGRAMS:,} per launch (use larger blocks)")
        return out

    def check_arguments(self, bound: dict, flat: dict | None = None):
        """Refuse an argument no launch could take (a Python list for a pointer, say), naming it:
        @autotune asks before tuning, so such a call fails as the plain kernel's would.  A tuple
        (a named one too) is checked member by member, as Triton passes each member (`flat`:
        the arguments already flattened so, when the caller has them)."""
        for name, a in (flat if flat is not None else binding.flat(bound, self.constexprs)).items():
            if isinstance(a, np.ndarray) and name not in self.constexprs:
                try:
                    D.from_numpy(a.dtype)
                except TypeError as e:
                    raise TypeError(f"kernel '{self.__name__}': argument '{name}' is an array of {e}") from None
                continue
            if name in self.constexprs and isinstance(a, np.ndarray):
                raise TypeError(f"kernel '{self.__name__}': constexpr '{name}' got a numpy array of shape "
                                f"{list(a.shape)}; a constexpr is a Python value: pass {name}=int(...) or a number")
            if not (isinstance(a, np.ndarray) or a is None
                    or isinstance(a, (bool, int, float, str, np.generic, constexpr, tensor, D.dtype, type))
                    or name in self.constexprs or inspect.isfunction(a) or isinstance(a, JITFunction)):
                raise TypeError(f"kernel '{self.__name__}': argument '{name}' has unsupported type "
                                f"{type(a).__name__}; pass numpy arrays, numbers or constexpr values")

    def _arguments(self, bound):
        """Kernel arguments: arrays become pointers (aliased arrays share one buffer), numbers
        typed scalars; a tuple's members likewise, the tuple (a named one keeps its class) rebuilt."""
        flat = binding.flat(bound, self.constexprs)
        self.check_arguments(bound, flat)
        values = {}
        arrays = {name: a for name, a in flat.items() if isinstance(a, np.ndarray)}
        buffers = bind_buffers(arrays)
        for name, a in flat.items():
            if name in buffers:
                values[name] = argument_pointer(buffers[name], const=name in self.consts)
            elif name not in self.constexprs and isinstance(a, (bool, int, float, np.number, np.bool_)) \
                    and not (type(a) is int and a == 1 and name not in self.annotated
                             and name not in self.unspecialized):  # Triton specializes 1 to a constant
                try:
                    values[name] = argument(a, self.annotated.get(name))
                except (OverflowError, TypeError) as e:
                    raise type(e)(f"kernel '{self.__name__}', argument '{name}': {e}") from None
            else:
                values[name] = a
        storages = list({id(b.storage): b.storage for b in buffers.values()}.values())
        return binding.unflat(bound, values, self.constexprs), storages, AddressSpace(buffers, storages)

    def _execute(self, bound, grid, options=None, check_only=False):
        values, buffers, space = self._arguments(bound)
        context.start_deadline()   # loops check it: a launch that never ends stops with an error
        context.LOCAL.trip_by_trip = False      # lanes.py's loops as rows, until a value of them is too big
        pids = binding.program_ids(grid)[:1] if check_only else binding.program_ids(grid)
        recorder = counting.active()
        warps = (options or {}).get("num_warps", 4)
        counts, sampled, path = [], False, "lockstep"
        try:
            body = self._body()
            try:
                if _mode.sequential:
                    raise Divergent("one program at a time requested")
                rows = LOCKSTEP_ROWS
                schedule = (grid, tuple(repr(bound[k]) for k in self.constexprs))
                if schedule in self._groups:
                    rows, why = self._groups[schedule]
                    path = f"lockstep ({rows} programs at a time, as the last launch: {why})"
                while True:
                    self._restart_stats()
                    try:
                        counts = [self._run_programs(body, values, grid, pids[start:start + rows], buffers, space, recorder,
                                                    warps)
                                  for start in range(0, pids.shape[0], rows)]
                        break
                    except MemoryPressure as why:
                        if rows == 1 and context.LOCAL.trip_by_trip:
                            raise
                        for b in buffers:
                            b.reset()
                        context.LOCAL.trip_by_trip = rows == 1     # then the value was a loop's trips as lanes
                        rows = max(1, min(rows, pids.shape[0]) // 8)
                        path = f"lockstep ({rows} programs at a time: {why})"
                        self._groups[schedule] = (rows, why)
                    except Stalled as why:
                        # programs wait for one parked in the same group (a lock): smaller groups,
                        # run one after another in program order, as a GPU may schedule them
                        rows = min(rows, pids.shape[0]) // 2
                        if why.through > 1:
                            rows = min(rows, why.through)
                        if rows < 2:
                            raise
                        for b in buffers:
                            b.reset()
                        path = f"lockstep ({rows} programs at a time: {why})"
                        self._groups[schedule] = (rows, why)
            except Divergent as why:
                for b in buffers:
                    b.reset()
                path = f"one program at a time ({why})"
                order = range(pids.shape[0])
                if recorder is not None and pids.shape[0] > recorder.max_sequential:
                    order = np.unique(np.linspace(0, pids.shape[0] - 1, recorder.max_sequential).astype(int))
                    sampled = True
                self._restart_stats()
                one = lambda row: self._run_programs(body, values, grid, pids[row:row + 1], buffers, space, recorder,
                                                     warps)
                if isinstance(why, Stalled):    # programs wait for later ones: cooperative.py (every one, if traced)
                    path = f"one program at a time, each in a thread that hands over while it waits ({why})"
                    counts = cooperative.run(one, pids.shape[0], self.__name__)
                else:
                    counts = [one(row) for row in order]
        except BaseException as e:
            for b in buffers:
                b.reset()
            if isinstance(e, Exception) and not getattr(e, "_mt_noted", False):
                errors.note_positions(e, errors.kernel_positions(e.__traceback__, _ENTRIES))
                e.add_note(f"(in minitriton kernel '{self.__name__}', grid {grid})")
                e._mt_noted = True
            if isinstance(e, Exception) and not isinstance(e, errors.TritonError):
                raise errors.as_triton_error(e) from e
            raise
        if self.last_launch is not None:
            self.last_launch["path"] = path
        if check_only:
            for b in buffers:
                b.reset()
            return
        if recorder is not None:  # a traced launch writes nothing back
            for b in buffers:
                b.reset()
            meta = {k: bound[k] for k in self.constexprs}
            meta.update(num_warps=(options or {}).get("num_warps", 4), num_stages=(options or {}).get("num_stages", 3))
            scalars = {k: v for k, v in bound.items() if k not in self.constexprs
                       and isinstance(v, (int, float, np.number)) and not isinstance(v, bool)}
            recorder.launches.append(counting.LaunchRecord(self.__name__, grid, meta, scalars, counts, sampled))
            return
        # the arguments only stored to first: their logged values (and deferred results) may be
        # views of another argument's memory, which that one's write-back would change under them
        for b in sorted(buffers, key=lambda b: not b.logging):
            b.commit()

    def _restart_stats(self):
        if self.last_launch is not None:
            self.last_launch["narrowed"] = self.last_launch["fused"] = self.last_launch["laned"] = 0
            self.last_launch["rounds"] = 0

    def _run_programs(self, body, values, grid, pids, buffers, space, recorder=None, num_warps=4):
        state = context.LaunchState(self.__name__, grid, pids, buffers, num_warps)
        state.space = space
        if recorder is not None:
            state.counts = counting.Counts.for_programs(pids)
        with context.running(state), np.errstate(all="ignore"):  # a GPU raises no FP exceptions
            body(**values)
        if self.last_launch is not None:
            self.last_launch["narrowed"] = self.last_launch.get("narrowed", 0) + state.narrowed
            self.last_launch["fused"] = self.last_launch.get("fused", 0) + state.fused
            self.last_launch["laned"] = self.last_launch.get("laned", 0) + state.laned
            self.last_launch["rounds"] = self.last_launch.get("rounds", 0) + state.rounds
        return state.counts


class _Mode(threading.local):
    sequential = False


_mode = _Mode()


@contextlib.contextmanager
def one_program_at_a_time():
    """Within this block, launches run every program separately (the fallback path), e.g. to
    check that it gives the same bits as lockstep execution."""
    prev, _mode.sequential = _mode.sequential, True
    try:
        yield
    finally:
        _mode.sequential = prev


def jit(fn=None, **options):
    """Decorator: `@jit` or `@jit(debug=True, launch_metadata=..., ...)` (options are kept)."""
    return (lambda f: JITFunction(f, **options)) if fn is None else JITFunction(fn, **options)
