"""The tuner contract."""
from __future__ import annotations

from ..space import Space, as_config


class Tuner:
    name = "tuner"

    def __init__(self, space: Space | None = None, configs=None, seed: int = 0):
        self.space = space
        self.configs = [as_config(c) for c in configs] if configs is not None else None
        self.seed = seed
        self.seen: set = set()
        self.task = None  # set by make_tuner: what is being tuned

    def settings(self) -> dict:
        """What identifies this tuner's search (part of the cache key)."""
        return {"tuner": self.name, "seed": self.seed}

    def next_batch(self, n: int) -> list:
        raise NotImplementedError

    def update(self, records) -> None:
        for r in records:
            self.seen.add(r.config)

    def _candidates(self):
        """The points this tuner may propose: the config list if given, else the space."""
        if self.configs is not None:
            return self.configs
        if self.space is None:
            raise ValueError(f"the {self.name} tuner needs a config list or a space")
        return None


class Team(Tuner):
    """A tuner made of tuners (`self.tuners`) that share one search: each member sees the space,
    config list and task this one was given, is told every measurement, and knows every config
    proposed, whoever proposed it, so each starts where the others left off."""
    tuners: list = []
    measured = 0        # measurements told so far

    def settings(self) -> dict:
        return {"tuner": self.name, "seed": self.seed}

    def _share(self):
        for t in self.tuners:
            t.task = self.task
            if t.space is None and t.configs is None:
                t.space, t.configs = self.space, self.configs

    def update(self, records):
        records = list(records)
        super().update(records)
        self._share()
        self.measured += len(records)
        for t in self.tuners:
            t.update(records)

    def _proposed(self, out) -> list:
        """Every member (and this tuner) marks `out` as proposed; returns it."""
        for t in self.tuners:
            t.seen.update(out)
        self.seen.update(out)
        return out
