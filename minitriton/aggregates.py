"""Compile-time helpers of Triton's newer front end: `triton.constexpr_function` and
`triton.aggregate`.

A constexpr function is plain Python run on compile-time values (block shapes, dtypes, tuples of
them) from a kernel or from the host: its arguments are unwrapped from `tl.constexpr`, and in a
kernel its result comes back as one, so `x: tl.constexpr = f(7)` sizes a block.  A block (a
per-program value) is refused as an argument, as Triton refuses it.

An aggregate is a class of named fields that kernels pass around as one value (a state, a
descriptor bundle): fields declared by annotation, in base-first order (an aggregate may extend
another aggregate only), `tl.constexpr` fields holding their values as constexprs, `tl.tuple`
fields as `tl.tuple`s (named tuples keep their field names).  Without an `__init__` of its own
the class gets one that takes the fields in order (defaults from the class body); methods may be
@jit or constexpr functions.  Its fields are set once, by the initializer: assigning one later
is refused, as Triton refuses it at compile time.  Divergent control flow merges two
aggregates of one class field by field (merging.select), and narrowing moves their fields
(narrowing.take); `fields` and `rebuild` are what they use.
"""
from __future__ import annotations

import functools

from . import context
from .dtypes import constexpr, is_annotation
from .tensor import TritonTuple, tensor

_MARK = "__triton_aggregate_fields__"
_ANNOTATIONS = "__triton_aggregate_annotations__"


def _unwrap(x):
    if isinstance(x, constexpr):
        return _unwrap(x.value)
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return type(x)(_unwrap(v) for v in x) if type(x) is tuple else TritonTuple(_unwrap(v) for v in x)
    if isinstance(x, list):
        return [_unwrap(v) for v in x]
    return x


class constexpr_function:
    """`@triton.constexpr_function`: see the module docstring."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __get__(self, obj, owner=None):
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, tensor):
                raise TypeError(f"constexpr_function {self.fn.__name__}: its arguments must be compile-time values "
                                f"(constexprs, numbers, dtypes, tuples), got a block {a!r}")
        plain = [a if is_aggregate(a) else _unwrap(a) for a in args]
        result = self.fn(*plain, **{k: _unwrap(v) for k, v in kwargs.items()})
        return constexpr(result) if context.active() and not isinstance(result, constexpr) else result


# ---------------------------------------------------------------- aggregates
def is_aggregate(x) -> bool:
    return hasattr(type(x), _MARK)


def is_aggregate_class(cls) -> bool:
    return hasattr(cls, _MARK)


def fields(x) -> list:
    """The field names of an aggregate instance, in declaration order (base first)."""
    return list(getattr(type(x), _MARK))


def rebuild(x, values: dict):
    """An aggregate of x's class holding `values` (name -> value), made without its initializer."""
    out = object.__new__(type(x))
    for name in fields(x):
        object.__setattr__(out, name, values[name])
    object.__setattr__(out, "_mt_frozen", True)
    return out


def _as_field(annotation, value):
    """A value as the field's annotation holds it: constexpr fields as constexprs, tuple fields
    as tl.tuples (numbers in them as constexprs; a named tuple's names kept)."""
    if is_annotation(annotation, constexpr):
        return value if isinstance(value, constexpr) else constexpr(value)
    if is_annotation(annotation, TritonTuple, "tuple") or annotation is tuple:
        return _as_tuple(value)
    return value


def _as_tuple(value):
    if not isinstance(value, tuple):
        return value
    items = [_as_tuple(v) if isinstance(v, tuple) else
             constexpr(v) if isinstance(v, (bool, int, float, str)) or v is None else v for v in value]
    return TritonTuple(items, names=getattr(value, "_fields", None))


def _frozen_setattr(self, name, value):
    if self.__dict__.get("_mt_frozen"):
        raise AttributeError(f"{type(self).__name__}: cannot assign to field {name!r} on immutable aggregate (its "
                             f"fields are set once, by its initializer, as in Triton); use "
                             f"tl.aggregate_replace(obj, {name}=...) for a modified copy")
    annotation = getattr(type(self), _ANNOTATIONS).get(name)
    object.__setattr__(self, name, value if annotation is None else _as_field(annotation, value))


def _annotations(cls) -> dict:
    out = {}
    for c in reversed(cls.__mro__):
        out.update(c.__dict__.get("__annotations__", {}))
    return out


def aggregate(cls):
    """`@triton.aggregate`: see the module docstring."""
    for base in cls.__bases__:
        if base is not object and _MARK not in base.__dict__:
            raise TypeError(f"aggregate {cls.__name__}: Aggregates can only inherit from other aggregates, "
                            f"not {base.__name__}")
    names = []
    for c in reversed(cls.__mro__):
        for name in c.__dict__.get("__annotations__", {}):
            if name not in names:
                names.append(name)
    setattr(cls, _MARK, tuple(names))
    setattr(cls, _ANNOTATIONS, _annotations(cls))
    own_init = cls.__dict__.get("__init__")

    if own_init is None:
        def __init__(self, *args, **kwargs):
            if len(args) > len(names):
                raise TypeError(f"{cls.__name__}() takes {len(names)} fields ({', '.join(names)}), got {len(args)}")
            given = dict(zip(names, args))
            for k, v in kwargs.items():
                if k not in names:
                    raise TypeError(f"{cls.__name__}() has no field {k!r} (fields: {', '.join(names)})")
                if k in given:
                    raise TypeError(f"{cls.__name__}() got field {k!r} twice")
                given[k] = v
            for name in names:
                if name not in given:
                    default = next((c.__dict__[name] for c in cls.__mro__ if name in c.__dict__), _MISSING)
                    if default is _MISSING:
                        raise TypeError(f"{cls.__name__}() is missing field {name!r}")
                    given[name] = default
            for name in names:
                _frozen_setattr(self, name, given[name])
    else:
        def __init__(self, *args, **kwargs):
            own_init(self, *args, **kwargs)
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"

    def init(self, *args, **kwargs):
        object.__setattr__(self, "_mt_frozen", False)
        __init__(self, *args, **kwargs)
        object.__setattr__(self, "_mt_frozen", True)

    cls.__init__ = init
    cls.__setattr__ = _frozen_setattr
    if "__repr__" not in cls.__dict__:
        cls.__repr__ = lambda self: f"{cls.__name__}({', '.join(f'{n}={getattr(self, n, None)!r}' for n in names)})"
    return cls


def aggregate_replace(obj, **changes):
    """`tl.aggregate_replace(obj, field=value, ...)`: a copy of an aggregate with those fields
    changed (held as their annotations say); the original is unchanged."""
    if not is_aggregate(obj):
        raise TypeError(f"tl.aggregate_replace expects an aggregate instance, got {type(obj).__name__}")
    names = fields(obj)
    for k in changes:
        if k not in names:
            raise TypeError(f"tl.aggregate_replace: {type(obj).__name__} has no field {k!r} (fields: {', '.join(names)})")
    annotations = getattr(type(obj), _ANNOTATIONS)
    return rebuild(obj, {n: _as_field(annotations.get(n), changes[n]) if n in changes else getattr(obj, n)
                         for n in names})


_MISSING = object()
