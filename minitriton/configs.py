"""Configs and search spaces: the vocabulary of launches that the tuners, the devices (HypoGPU,
Replay) and the kernels all speak, so it sits with the launch, below every one of them.

`Config` is Triton's (`triton.Config`): meta-parameters plus launch options.  A `Space` is a product of knob
domains (optionally filtered by a constraint) that tuners can enumerate, index, sample, and
step through one knob at a time, so list-based, model-based and evolutionary tuners all
work on the same object.
"""
from __future__ import annotations

import itertools
import numbers
import math
from typing import Callable, Mapping, Sequence

import numpy as np

LAUNCH_KNOBS = ("num_warps", "num_stages")


class Config:
    """Meta-parameters for one launch: `Config({"BLOCK_M": 128, ...}, num_warps=4, num_stages=3)`."""

    __slots__ = ("kwargs", "num_warps", "num_stages", "num_ctas", "maxnreg", "pre_hook", "ir_override",
                 "warp_spec")

    def __init__(self, kwargs: Mapping, num_warps: int = 4, num_stages: int = 3, num_ctas: int = 1,
                 maxnreg=None, pre_hook=None, ir_override=None, num_buffers_warp_spec: int = 0,
                 num_consumer_groups: int = 0, reg_dec_producer: int = 0, reg_inc_consumer: int = 0):
        if not isinstance(kwargs, Mapping):
            raise TypeError(f"Config kwargs must be a mapping of meta-parameters, got {type(kwargs).__name__}")
        self.kwargs = dict(kwargs)
        for name, v, least in (("num_warps", num_warps, 1), ("num_stages", num_stages, 0), ("num_ctas", num_ctas, 1)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < least:
                raise ValueError(f"Config: {name} must be an int >= {least}, got {v!r}")
        if num_warps & (num_warps - 1):
            raise ValueError(f"Config: num_warps must be a power of 2 (as in Triton), got {num_warps}")
        self.num_warps, self.num_stages, self.num_ctas = int(num_warps), int(num_stages), int(num_ctas)
        self.maxnreg, self.pre_hook = maxnreg, pre_hook
        self.ir_override = ir_override  # Triton's IR file replacing the compiled kernel: a launch refuses it
        # Triton 3.2's warp-specialisation settings (Hopper's producer and consumer warp groups):
        # how a GPU schedules the kernel, no value changes; kept, and passed to the launch if set
        self.warp_spec = {name: v for name, v in (("num_buffers_warp_spec", num_buffers_warp_spec),
                                                   ("num_consumer_groups", num_consumer_groups),
                                                   ("reg_dec_producer", reg_dec_producer),
                                                   ("reg_inc_consumer", reg_inc_consumer)) if v}
        for name, v in self.warp_spec.items():
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0:
                raise ValueError(f"Config: {name} must be an int >= 0, got {v!r}")

    def all_kwargs(self) -> dict:
        """Meta-parameters and launch options together, as passed to `kernel[grid](...)`."""
        out = {**self.kwargs, "num_warps": self.num_warps, "num_stages": self.num_stages, **self.warp_spec}
        if self.ir_override is not None:
            out["ir_override"] = self.ir_override
        return out

    def __getitem__(self, name):
        return self.all_kwargs()[name]

    def _key(self):
        return tuple(sorted(self.kwargs.items())) + (("num_warps", self.num_warps), ("num_stages", self.num_stages)) \
            + tuple(self.warp_spec.items()) + ((("ir_override", self.ir_override),) if self.ir_override is not None else ())

    def __eq__(self, other):
        return isinstance(other, Config) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        inner = ", ".join(f"{k}: {v}" for k, v in self.kwargs.items())
        extra = "".join(f", {k}={v}" for k, v in self.warp_spec.items())
        extra += f", ir_override={self.ir_override!r}" if self.ir_override is not None else ""
        return f"Config({{{inner}}}, num_warps={self.num_warps}, num_stages={self.num_stages}{extra})"

    __str__ = __repr__


def as_config(cfg) -> Config:
    if isinstance(cfg, Config):
        return cfg
    if isinstance(cfg, Mapping):
        kw = dict(cfg)
        launch = {k: kw.pop(k) for k in LAUNCH_KNOBS if k in kw}
        return Config(kw, **launch)
    raise TypeError(f"expected a Config or a dict of meta-parameters, got {type(cfg).__name__}")


class Space:
    """The product of knob domains, e.g. `Space(BLOCK_M=[16, 32], num_warps=[4, 8])`.

    `constraint(cfg_dict) -> bool` removes points from enumeration and sampling.
    """

    def __init__(self, knobs: Mapping[str, Sequence] | None = None, constraint: Callable | None = None, **kw):
        knobs = dict(knobs or {}, **kw)
        if not knobs:
            raise ValueError("a Space needs at least one knob")
        for k, v in knobs.items():
            if len(v) == 0:
                raise ValueError(f"knob '{k}' has an empty domain")
        self.knobs = {k: list(v) for k, v in knobs.items()}
        self.names = list(self.knobs)
        self.sizes = [len(v) for v in self.knobs.values()]
        self.constraint = constraint
        self.members = None     # flat indices of the valid points, when known up front (see listed)

    @classmethod
    def listed(cls, knobs: Mapping[str, Sequence], points) -> "Space":
        """A space whose valid points are known up front, as tuples of knob values in knob order
        (a recorded landscape: a real space is often a few per cent of its product).  Counting,
        enumerating and sampling it then cost what the list costs, not what the product does."""
        space = cls(knobs)
        where = [{v: i for i, v in enumerate(vals)} for vals in space.knobs.values()]
        try:
            idx = [[w[v] for w, v in zip(where, p)] for p in points]
        except (KeyError, TypeError):
            raise ValueError("Space.listed: every point must give one value of each knob, in knob order "
                             f"{space.names}") from None
        flat = np.ravel_multi_index(np.array(idx, np.int64).T, space.sizes) if idx else np.zeros(0, np.int64)
        space.members = np.unique(flat)
        keep = {tuple(p) for p in points}
        space.constraint = lambda cfg: tuple(cfg[k] for k in space.names) in keep
        return space

    @property
    def size(self) -> int:
        """Points in the product (before the constraint)."""
        return math.prod(self.sizes)

    @property
    def size_bound(self) -> int:
        """Points a tuner may have to consider, found without running the constraint: the listed
        ones when known, else the whole product."""
        return self.size if self.members is None else int(self.members.size)

    def __len__(self):
        if self.members is not None:
            return int(self.members.size)
        return self.size if self.constraint is None else sum(1 for _ in self)

    def __iter__(self):
        if self.members is not None:
            yield from (self.config(i) for i in self.members.tolist())
            return
        for idx in itertools.product(*(range(n) for n in self.sizes)):
            cfg = self.point(idx)
            if self.constraint is None or self.constraint(cfg):
                yield as_config(cfg)

    def valid_flat(self) -> np.ndarray:
        """Flat indices (ascending) of the points the constraint keeps."""
        if self.members is not None:
            return self.members
        if self.constraint is None:
            return np.arange(self.size, dtype=np.int64)
        return np.fromiter((i for i in range(self.size) if self.constraint(
            self.point(np.unravel_index(i, self.sizes)))), np.int64)

    def point(self, idx: Sequence[int]) -> dict:
        return {k: self.knobs[k][i] for k, i in zip(self.names, idx)}

    def config(self, flat_index: int) -> Config:
        """The config at a position of the unconstrained product (row-major, last knob fastest)."""
        return as_config(self.point(np.unravel_index(int(flat_index), self.sizes)))

    def indices(self, cfg) -> tuple:
        d = as_config(cfg).all_kwargs()
        try:
            return tuple(self.knobs[k].index(d[k]) for k in self.names)
        except (KeyError, ValueError):
            raise ValueError(f"{cfg} is not a point of this space (knobs {self.knobs})") from None

    def flat_index(self, cfg) -> int:
        return int(np.ravel_multi_index(self.indices(cfg), self.sizes))

    def __contains__(self, cfg) -> bool:
        try:
            self.indices(cfg)
        except ValueError:
            return False
        return self.constraint is None or self.constraint(as_config(cfg).all_kwargs())

    def sample(self, rng: np.random.Generator, n: int) -> list[Config]:
        """Up to n distinct random points (uniform over the constrained space)."""
        out, seen, tries = [], set(), 0
        n = min(n, self.size)
        while len(out) < n and tries < 50 * n + 100:
            tries += 1
            idx = tuple(int(rng.integers(s)) for s in self.sizes)
            if idx in seen:
                continue
            seen.add(idx)
            cfg = self.point(idx)
            if self.constraint is None or self.constraint(cfg):
                out.append(as_config(cfg))
        if len(out) < n and self.members is not None:  # a sparse listed space: the rest from its list
            taken = {self.flat_index(c) for c in out}
            rest = np.setdiff1d(self.members, np.fromiter(taken, np.int64, len(taken)))
            pick = rng.choice(rest, size=min(n - len(out), rest.size), replace=False)
            out += [self.config(i) for i in pick.tolist()]
        return out

    def neighbors(self, cfg) -> list[Config]:
        """Configs one step away along one knob (the adjacent value of an ordered domain)."""
        idx = list(self.indices(cfg))
        out = []
        for d, n in enumerate(self.sizes):
            for step in (-1, 1):
                j = idx[d] + step
                if 0 <= j < n:
                    new = idx.copy()
                    new[d] = j
                    p = self.point(new)
                    if self.constraint is None or self.constraint(p):
                        out.append(as_config(p))
        return out

    def arrays(self) -> dict[str, np.ndarray]:
        """Every point of the unconstrained product as one array per knob (flat order)."""
        grids = np.meshgrid(*(np.asarray(v) for v in self.knobs.values()), indexing="ij")
        return {k: g.reshape(-1) for k, g in zip(self.names, grids)}

    def __repr__(self):
        return "Space(" + ", ".join(f"{k}={v}" for k, v in self.knobs.items()) + ")"
