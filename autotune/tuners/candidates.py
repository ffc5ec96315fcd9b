"""The points a knob-level search may propose, as rows: each row a config, each config a level
(the position of its value) per knob.

The Gaussian process, the neighbourhood search and the evolution all reason about "this config
with one knob changed" and "these two configs mixed"; they need the same three things of a space
or a config list: every valid point as a row of levels, the row of a config, and the rows one
knob change away.  A recorded landscape keeps a few per cent of its knobs' product, so the rows
are the valid points themselves (listed once), never the product.
"""
from __future__ import annotations

import numpy as np

ENUMERATE_UP_TO = 2_000_000   # valid points a search over rows may hold


class Candidates:
    def __init__(self, space=None, configs=None, who="this tuner"):
        if configs is not None:
            names = sorted({k for c in configs for k in c.all_kwargs()})
            self.domains = [sorted({c.all_kwargs().get(k) for c in configs}, key=str) for k in names]
            where = [{v: i for i, v in enumerate(d)} for d in self.domains]
            self.pos = np.array([[w[c.all_kwargs().get(k)] for k, w in zip(names, where)] for c in configs],
                                np.int64).reshape(len(configs), len(names))
            self.rows = list(configs)
            self.row_of = {c: r for r, c in enumerate(self.rows)}
        else:
            if space.size_bound > ENUMERATE_UP_TO:
                raise ValueError(f"the {who} tuner needs a space of at most {ENUMERATE_UP_TO:,} points, got "
                                 f"{space.size_bound:,}; use ansor")
            flat = space.valid_flat()
            self.domains = list(space.knobs.values())
            self.pos = np.stack(np.unravel_index(flat, space.sizes), axis=1) if flat.size else \
                np.zeros((0, len(self.domains)), np.int64)
            self.rows = flat
            self.row_of = {int(i): r for r, i in enumerate(flat)}
        self.space, self.listed = space, configs is not None
        self._by_levels = None

    def __len__(self):
        return len(self.pos)

    def config(self, r):
        return self.rows[r] if self.listed else self.space.config(int(self.rows[r]))

    def row(self, config):
        """The row of a config, or None if it is not one of the candidates."""
        if self.listed:
            return self.row_of.get(config)
        return self.row_of.get(int(self.space.flat_index(config))) if config in self.space else None

    def row_at(self, levels):
        """The row whose levels are `levels` (a sequence of ints), or None if no candidate has them."""
        if self._by_levels is None:
            self._by_levels = {tuple(p): r for r, p in enumerate(self.pos.tolist())}
        return self._by_levels.get(tuple(int(v) for v in levels))

    def neighbours(self, r) -> tuple[list, list]:
        """The rows one knob change from row r: (the changes to a next level up or down, the rest)."""
        here = self.pos[r].tolist()
        near, far = [], []
        for j, domain in enumerate(self.domains):
            for level in range(len(domain)):
                if level != here[j]:
                    q = self.row_at(here[:j] + [level] + here[j + 1:])
                    if q is not None:
                        (near if abs(level - here[j]) == 1 else far).append(q)
        return near, far
