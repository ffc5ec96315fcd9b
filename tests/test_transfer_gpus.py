"""Cross-GPU transfer (autotune/transfer.py, tuners/transfer.py): sources are matched to the task
by parameter values, mismatched ones are refused, a source that predicts the new GPU makes the
search find its optimum sooner, and a misleading one costs only a few measurements."""
import json

import numpy as np
import pytest

from autotune import tune
from autotune.records import Record, RecordLog
from autotune.space import Config
from autotune.transfer import read_sources
from autotune.tuners.alternating import BayesTPETuner
from autotune.tuners.bayes import BayesTuner
from autotune.tuners.transfer import TransferTuner
from minitriton.hypogpu import oracle
from minitriton.replay import Replay

PARAMS = {"block_x": [16, 32, 64, 128, 256], "block_y": [1, 2, 4, 8, 16], "tile": [1, 2, 3, 4, 6, 8],
          "unroll": [0, 1]}


def landscape(seed=0, flip=False, like=None):
    """A GPU's times (ms) over PARAMS: a smooth bowl with interactions and a little jag; or
    another GPU `like` this one (each time off by a random factor of about 30 %, so the ranking
    mostly agrees), or this one's ranking reversed (`flip`)."""
    rng = np.random.default_rng(seed)
    if like is not None:
        return {p: t * float(np.exp(rng.normal(0, 0.3))) for p, t in like.items()}
    centre = np.array([2.5, 2.0, 2.5, 0.5]) + rng.normal(0, 0.3, 4)
    jag = rng.normal(0, 0.05, size=[len(v) for v in PARAMS.values()])
    times = {}
    for idx in np.ndindex(*jag.shape):
        x = np.array(idx, float)
        t = 1.0 + 0.15 * ((x - centre) ** 2).sum() + 0.1 * (x[0] - centre[0]) * (x[2] - centre[2]) + jag[idx]
        times[tuple(v[i] for v, i in zip(PARAMS.values(), idx))] = float(np.exp(t))
    if flip:
        hi = max(times.values())
        times = {p: hi * hi / t / 50 for p, t in times.items()}
    return times


def write(path, times, params=PARAMS):
    keys = list(params)
    cache = {",".join(map(str, p)): {**dict(zip(keys, p)), "time": t, "times": [t]} for p, t in times.items()}
    path.write_text(json.dumps({"device_name": path.stem, "kernel_name": "k", "tune_params_keys": keys,
                                "tune_params": params, "objective": "time", "cache": cache}))
    return path


@pytest.fixture
def gpus(tmp_path):
    return {"target": write(tmp_path / "target.json", landscape(0)),
            "near": write(tmp_path / "near.json", landscape(1, like=landscape(0))),
            "reversed": write(tmp_path / "reversed.json", landscape(0, flip=True))}


def to_reach(path, share, seeds, budget=50, **kw):
    """Measurements until the best found is within `share` of the target's optimum, per seed."""
    task = Replay(path).task()
    truth = oracle(task)
    out = []
    for seed in seeds:
        r = tune(task, "bayes_tpe", budget=budget, seed=seed, progress=False, remeasure=False, **kw)
        shares = truth.best_time / np.minimum.accumulate([truth.time_of(x.config) for x in r.history])
        hit = np.flatnonzero(shares >= share)
        out.append(int(hit[0]) + 1 if hit.size else budget + 1)
    return np.array(out)


def test_the_first_proposal_is_the_sources_fastest_config(gpus):
    task = Replay(gpus["target"]).task()
    source = Replay(gpus["near"])
    fastest = min(source.records, key=lambda p: source.records[p]["time"])
    r = tune(task, budget=1, seed=0, progress=False, remeasure=False, transfer=[gpus["near"]])
    assert tuple(r.history[0].config.all_kwargs()[k] for k in PARAMS) == fastest
    # the same source as a Replay device, and as our own records of it, propose the same config
    for same in (source, [Record(Config(dict(zip(PARAMS, p))), [e["time"] / 1e3]) for p, e in source.records.items()]):
        again = tune(task, budget=1, seed=0, progress=False, remeasure=False, transfer=[same])
        assert again.history[0].config == r.history[0].config


def test_records_sources_are_matched_by_parameter_values(gpus, tmp_path):
    task = Replay(gpus["target"]).task()
    log = RecordLog(tmp_path / "other.jsonl")
    point = (64, 4, 3, 1)
    log.append(Record(Config(dict(zip(PARAMS, point))), [1e-6]))   # one config, the fastest by far
    r = tune(task, budget=1, seed=0, progress=False, remeasure=False, transfer=[log])
    assert tuple(r.history[0].config.all_kwargs()[k] for k in PARAMS) == point


def test_a_source_with_other_parameters_is_refused_naming_them(gpus, tmp_path):
    task = Replay(gpus["target"]).task()
    other = dict(PARAMS)
    other.pop("unroll")
    other["threads"] = [1, 2]
    bad = write(tmp_path / "bad.json", {p[:3] + (t,): 1.0 for p in landscape(0) for t in (1, 2)}, other)
    with pytest.raises(ValueError, match=r"lacks the task's unroll and has threads"):
        tune(task, budget=4, progress=False, transfer=[bad])
    with pytest.raises(ValueError, match="a source must be"):
        tune(task, budget=4, progress=False, transfer=[42])
    with pytest.raises(ValueError, match="expected a list of sources"):
        tune(task, budget=4, progress=False, transfer=42)


def test_a_source_that_predicts_this_gpu_finds_its_optimum_sooner(gpus):
    seeds = range(4)
    alone = to_reach(gpus["target"], 0.99, seeds)
    helped = to_reach(gpus["target"], 0.99, seeds, transfer=[gpus["near"]])
    assert np.median(helped) <= np.median(alone) / 2, (helped, alone)


def test_a_source_whose_fastest_configs_do_not_run_here_still_proposes(tmp_path):
    """The new GPU lacks the source's five fastest configs (too much shared memory on a smaller
    part, say): the source's fastest config that runs here is among the first proposals, not
    dropped because the base tuner measured something before the source had proposed anything."""
    near = landscape(1, like=landscape(0))
    order = sorted(near, key=near.get)
    lacking = {p: t for p, t in landscape(0).items() if p not in order[:5]}
    task = Replay(write(tmp_path / "small.json", lacking)).task()
    source = write(tmp_path / "near.json", near)
    for seed in range(3):
        r = tune(task, budget=3, seed=seed, progress=False, remeasure=False, transfer=[source])
        assert order[5] in [tuple(x.config.all_kwargs()[k] for k in PARAMS) for x in r.history]


def test_a_reversed_source_costs_only_a_few_measurements(gpus):
    seeds = range(4)
    alone = to_reach(gpus["target"], 0.97, seeds)
    misled = to_reach(gpus["target"], 0.97, seeds, transfer=[gpus["reversed"]])
    assert np.mean(misled) <= np.mean(alone) + 4, (misled, alone)
    # with a good source beside it, the reversed one does not spoil the good one's help
    both = to_reach(gpus["target"], 0.99, seeds, transfer=[gpus["reversed"], gpus["near"]])
    assert np.median(both) <= np.median(to_reach(gpus["target"], 0.99, seeds)) / 2 + 2


def test_a_source_whose_best_is_a_plateau_is_forgotten_once_it_stops_paying(tmp_path):
    """A source that agrees with this GPU everywhere but at its top (the configs within 15 % of
    the optimum are slow there): its best region is a plateau.  Once the transfer arm retires,
    the GP no longer models the arm's picks (they are not proposed again), and the plateau costs
    only a few measurements against no transfer."""
    target = landscape(0)
    best = min(target.values())
    plateau = {p: t * (4.0 if t <= best * 1.15 else 1.0) for p, t in target.items()}
    tp, sp = write(tmp_path / "target.json", target), write(tmp_path / "plateau.json", plateau)
    task = Replay(tp).task()
    names = list(task.space.names)
    search = TransferTuner(BayesTPETuner(task.space, None, 0), read_sources([sp], names), names, 0)
    search.task = task
    configs = []
    for _ in range(60):                       # measured from the target's recorded times
        config, = search.next_batch(1)
        configs.append(config)
        search.update([Record(config, [target[tuple(config.all_kwargs()[k] for k in names)] / 1e3])])
    assert len(set(configs)) == len(configs)
    assert search.retired and search.mine
    gp = next(t for t in search.base.tuners if isinstance(t, BayesTuner))
    picked = {gp.cands.row(c) for c in configs if tuple(c.all_kwargs()[k] for k in names) in search.mine}
    assert picked and not picked & set(gp.times), "the GP still models the retired arm's picks"
    seeds = range(4)
    alone = to_reach(tp, 0.99, seeds, budget=80)
    misled = to_reach(tp, 0.99, seeds, budget=80, transfer=[sp])
    assert np.mean(misled) <= np.mean(alone) + 8, (misled, alone)


def test_the_decorator_takes_sources_from_other_gpus(gpus, tmp_path):
    import minitriton as mt
    import minitriton.language as tl
    from autotune import autotune
    device, source = Replay(gpus["target"]), Replay(gpus["near"])

    @autotune(space=device.space, key=["n"], device=device, budget=6, cache_dir=tmp_path, transfer=[gpus["near"]])
    @mt.jit
    def copy(x_ptr, y_ptr, n, block_x: tl.constexpr, block_y: tl.constexpr, tile: tl.constexpr, unroll: tl.constexpr):
        offs = tl.program_id(0) * 64 + tl.arange(0, 64)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    x = np.arange(100, dtype=np.float32)
    y = np.zeros_like(x)
    copy[(2,)](x, y, 100)
    first = copy.last_tuning.history[0].config.all_kwargs()
    assert np.array_equal(x, y)
    assert tuple(first[k] for k in PARAMS) == min(source.records, key=lambda p: source.records[p]["time"])
    with pytest.raises(ValueError, match="transfer= must be"):
        autotune(space=device.space, key=["n"], device=device, transfer=42)(copy.fn)
