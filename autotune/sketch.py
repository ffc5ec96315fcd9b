"""Sketches: a search space split by program structure (Ansor, lecture §5.2-5.3).

A sketch is one structure of the program, the decisions that change which kernels run and how
they are nested (tiled or not, the reduction split across programs or not, the epilogue fused
or written back and applied by a second kernel), with blanks left for the numbers: tile sizes,
warps, stages, group size, split factor.  Here a sketch is a `Space` whose domains are the
blanks' legal values in that structure (a structural knob is fixed, or limited to the values
that make it that structure), within the kernel's full space.

A library kernel declares its sketch rules (`kernel.sketch_rules(shape)`), each with the
condition under which Ansor's rule applies; `Task.sketches` lists those generated at the
task's shape, and printing it says why each rule was or was not applied.  A kernel without
rules, a plain `Space` or a config list is one sketch.
"""
from __future__ import annotations

from dataclasses import dataclass

from .space import Space

SLOTS = 108  # programs a GPU of the A100 class runs at once (its SM count, a published spec): "fills the machine"


@dataclass
class Sketch:
    name: str
    rules: tuple          # the rules that made it (Ansor's table 1), in words
    space: object         # a Space of the blanks' legal values, or a list of configs
    source: str = ""      # the kernels' source, for a generated operator (autotune/codegen/)

    def __repr__(self):
        return f"Sketch({self.name!r}: {' + '.join(self.rules)})"


@dataclass
class Decision:
    """One rule checked at one shape: the sketch it makes, whether it applies, and why."""
    name: str
    rule: str
    applies: bool
    reason: str
    space: object = None
    source: str = ""


class Sketches(list):
    """The generated sketches of a task, printing every rule's verdict."""

    def __init__(self, sketches, decisions=()):
        super().__init__(sketches)
        self.decisions = list(decisions)

    def __str__(self):
        lines = []
        for d in self.decisions:
            mark = "generated" if d.applies else "not generated"
            lines.append(f"{d.name:<36} {mark:<14} {d.rule}: {d.reason}")
        return "\n".join(lines) if lines else "\n".join(f"{s.name}: {', '.join(s.rules)}" for s in self)

    __repr__ = __str__


class EmptySketch(ValueError):
    """A rule's restriction leaves a knob no value in this space (a user space that pins it)."""


def restrict(space: Space, **domains) -> Space | EmptySketch:
    """`space` with some knobs limited to the given values (kept in the space's order), or the
    EmptySketch saying which knob has none left: a space the user narrowed (SPLIT_K=[1]) has no
    rfactor sketch, and `build` records that rule as not applying instead of failing."""
    knobs = dict(space.knobs)
    for k, allowed in domains.items():
        if k not in knobs:
            raise ValueError(f"sketch: knob {k!r} is not in the space (knobs {list(knobs)})")
        knobs[k] = [v for v in knobs[k] if (allowed(v) if callable(allowed) else v in allowed)]
        if not knobs[k]:
            return EmptySketch(f"the space leaves {k!r} no value this sketch needs (its values: {space.knobs[k]})")
    return Space(knobs, constraint=space.constraint)


def build(decisions, space=None) -> Sketches:
    """The sketches of the rules that apply; a rule whose restriction is empty in this space does
    not apply (its reason says why).  When none is left, the space as written is one sketch."""
    checked = []
    for d in decisions:
        if d.applies and isinstance(d.space, EmptySketch):
            d = Decision(d.name, d.rule, False, f"{d.reason}; but {d.space}", None, d.source)
        checked.append(d)
    made = [Sketch(d.name, tuple(d.rule.split(" + ")), d.space, d.source) for d in checked if d.applies]
    if not made and space is not None:
        return Sketches([Sketch("as written", ("the space",), space)], checked)
    return Sketches(made, checked)


def of(task, space=None, configs=None) -> Sketches:
    """The sketches a tuner searches: the kernel's rules at the task's shape when it declares
    them and the search is over its own space; otherwise the space or list as written."""
    kernel = getattr(task, "kernel", None)
    rules = getattr(kernel, "sketch_rules", None)
    if configs is not None:
        return Sketches([Sketch("as listed", ("the config list",), list(configs))],
                        [Decision("as listed", "the config list", True, "a config list is one sketch")])
    if rules is not None and (space is None or space is task.space):
        return build(rules(task.shape, task.space), task.space)
    if space is None:
        raise ValueError("sketches need a task with sketch rules, a space or a config list")
    return Sketches([Sketch("as written", ("the space",), space)],
                    [Decision("as written", "the space", True, "a plain Space is one sketch", space)])


def gemm_rules(M: int, N: int, K: int, space: Space, what: str = "C = A·B", epilogue: str | None = None,
               batch: int = 1):
    """Ansor's rules for a matrix product over M x N x K (matmul, and conv2d as implicit GEMM):
    multi-level tiling always (data reuse), fusing an element-wise consumer when there is one;
    rfactor when the output cannot fill the machine and the reduction is long (SPLIT_K > 1,
    with the second kernel that adds the partial tiles)."""
    tiles = -(-M // 128) * -(-N // 128) * batch
    fills = tiles >= 2 * SLOTS
    long = K > max(M, N)
    if epilogue:
        base, rule = "tiled, fused epilogue", "multi-level tiling with fusion"
        reason = f"{what} reuses every loaded element and its consumer ({epilogue}) is element-wise (rule 4 + rule 5)"
    else:
        base, rule = "tiled", "multi-level tiling + cache write"
        reason = (f"{what} reuses every loaded element and has no consumer to fuse: its tile accumulates in "
                  f"registers and is written once (rule 3 + rule 5)")
    out = [Decision(base, rule, True, reason, restrict(space, SPLIT_K=[1]))]
    why = (f"{tiles} output tiles of 128x128{f' (over a batch of {batch})' if batch > 1 else ''} "
           f"{'fill' if fills else 'cannot fill'} {2 * SLOTS} program slots "
           f"(two per SM), and K = {K} {'>' if long else '<='} max(M, N) = {max(M, N)}")
    out.append(Decision(base + " + rfactor", rule + " + rfactor (split-K and a reduction kernel)",
                        not fills and long, why, restrict(space, SPLIT_K=lambda v: v > 1)))
    if epilogue:
        out.append(Decision("cache write + separate epilogue", "multi-level tiling + cache write", False,
                            f"the consumer ({epilogue}) fuses into the write-back, so rule 4 takes the node and "
                            f"the cache-write rule (for consumers that cannot fuse) does not apply"))
    return out


def reduction_rules(rows: int, length: int, space: Space, split: str):
    """A reduction with no data reuse (each element read once): no multi-level tiling; rfactor
    when the rows cannot fill the machine and each row is long."""
    fills = rows >= 2 * SLOTS
    long = length >= 64 * 1024
    why = (f"{rows} rows {'fill' if fills else 'cannot fill'} {2 * SLOTS} program slots and rows are "
           f"{length} long ({'>=' if long else '<'} 65536)")
    return [Decision("one program per row", "simple reduction (no data reuse: rule 1 skips tiling)", True,
                     "each element is read once", restrict(space, **{split: [1]})),
            Decision("rfactor", "rfactor (cross-program reduction and a second kernel)", not fills and long, why,
                     restrict(space, **{split: lambda v: v > 1}))]
