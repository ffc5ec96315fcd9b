"""Spaces: enumeration, indexing, sampling, neighbours, constraints (what every tuner builds on)."""
import numpy as np

from autotune import Space, Config


def test_space_indexing_sampling_and_neighbours():
    space = Space(BLOCK_M=[16, 32, 64], num_warps=[2, 4], num_stages=[1, 2, 3])
    assert space.size == len(list(space)) == 18
    cfg = space.config(7)
    assert space.flat_index(cfg) == 7 and cfg in space
    assert cfg == Config({"BLOCK_M": 32}, num_warps=2, num_stages=2)
    near = space.neighbors(cfg)   # one step along one knob
    assert {(c.kwargs["BLOCK_M"], c.num_warps, c.num_stages) for c in near} == {
        (16, 2, 2), (64, 2, 2), (32, 4, 2), (32, 2, 1), (32, 2, 3)}
    drawn = space.sample(np.random.default_rng(0), 30)
    assert len(drawn) == 18 and len(set(drawn)) == 18
    arrays = space.arrays()
    assert [arrays[k][7] for k in space.names] == [32, 2, 2]


def test_constraint_filters_enumeration_sampling_and_neighbours():
    space = Space(BLOCK_M=[16, 32, 64], num_warps=[2, 4], constraint=lambda c: c["BLOCK_M"] * c["num_warps"] <= 128)
    assert len(space) == 5 and all(c in space for c in space)
    assert Config({"BLOCK_M": 64}, num_warps=4) not in space
    assert all(c in space for c in space.sample(np.random.default_rng(1), 10))
    assert all(c in space for c in space.neighbors(Config({"BLOCK_M": 32}, num_warps=4)))
