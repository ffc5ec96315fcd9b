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


def test_a_listed_space_counts_enumerates_and_samples_only_its_points():
    """A recorded landscape keeps a few of its product's points; with them listed, counting and
    sampling must not depend on hitting them by chance (50 of 46,656 here)."""
    knobs = {f"k{j}": [1, 2, 4, 8, 16, 32] for j in range(6)}
    rng = np.random.default_rng(0)
    points = {tuple(int(v) for v in rng.choice([1, 2, 4, 8, 16, 32], 6)) for _ in range(50)}
    space = Space.listed(knobs, sorted(points))
    assert space.size == 6 ** 6 and len(space) == space.size_bound == len(points)
    assert {tuple(c.kwargs[k] for k in space.names) for c in space} == points
    flat = space.valid_flat()
    assert np.all(np.diff(flat) > 0) and {space.flat_index(space.config(i)) for i in flat} == set(flat.tolist())
    drawn = space.sample(np.random.default_rng(1), 20)
    assert len(drawn) == len(set(drawn)) == 20 and all(c in space for c in drawn)
    outside = next(p for p in [(1,) * 6, (32,) * 6, (2,) * 6] if p not in points)
    assert Config(dict(zip(space.names, outside))) not in space
    assert Space(knobs).size_bound == 6 ** 6                         # nothing listed: the product
    try:
        Space.listed(knobs, [(1, 2, 3, 4, 5, 6)])
    except ValueError as e:
        assert "Space.listed" in str(e) and "k0" in str(e)
    else:
        raise AssertionError("a point with values outside the knobs was accepted")
