"""The leaderboard's store of measured curves (benchmarks/curve_store.py): what it keeps, what
makes an entry stale, and that a damaged file costs only what it held."""
import json

import numpy as np

from benchmarks import curve_store
from benchmarks.curve_store import Store


def landscape(tmp_path, text="{}"):
    p = tmp_path / "gemm_X.json"
    p.write_text(text)
    return str(p)


def test_a_curve_comes_back_as_it_went_in(tmp_path):
    path = landscape(tmp_path)
    curve = np.maximum.accumulate(np.random.default_rng(1).random(400))
    store = Store(tmp_path / "store")
    store.put(path, "ga", "v1", 400, 3, curve, 1.0)
    again, chosen = Store(tmp_path / "store").get(path, "ga", "v1", 400, 3)   # read back from the file
    assert np.allclose(again, curve, rtol=1e-6) and chosen == 1.0
    assert Store(tmp_path / "store").get(path, "ga", "v1", 400, 4) is None      # another seed
    assert Store(tmp_path / "store").get(path, "ga", "v2", 400, 3) is None      # other code: stale
    assert Store(tmp_path / "store").get(path, "ga", "v1", 200, 3) is None      # other budget


def test_another_landscape_file_is_another_entry(tmp_path):
    path = landscape(tmp_path)
    store = Store(tmp_path / "store")
    store.put(path, "ga", "v1", 10, 0, np.linspace(0.1, 1, 10), 1.0)
    (tmp_path / "gemm_X.json").write_text('{"changed": 1}')            # same name, new content
    assert Store(tmp_path / "store").get(path, "ga", "v1", 10, 0) is None


def test_two_stores_filling_one_folder_keep_each_other_s_runs(tmp_path):
    """Two benchmarks at once (the peers' seeds in one process, ours in another): each writes
    the whole landscape file, and neither may drop what the other wrote after it first read."""
    path = landscape(tmp_path)
    ours, theirs = Store(tmp_path / "store"), Store(tmp_path / "store")
    ours.put(path, "ga", "v1", 10, 0, np.linspace(0.1, 1, 10), 1.0)
    theirs.put(path, "optuna", "o1", 10, 0, np.ones(10), 1.0)
    ours.put(path, "ga", "v1", 10, 1, np.ones(10), 0.5)          # this store had read the file before
    fresh = Store(tmp_path / "store")
    assert fresh.get(path, "optuna", "o1", 10, 0) is not None
    assert fresh.get(path, "ga", "v1", 10, 0) is not None and fresh.get(path, "ga", "v1", 10, 1)[1] == 0.5


def test_new_code_replaces_the_stale_curves(tmp_path):
    path = landscape(tmp_path)
    store = Store(tmp_path / "store")
    store.put(path, "ga", "v1", 10, 0, np.linspace(0.1, 1, 10), 1.0)
    store.put(path, "ga", "v2", 10, 1, np.ones(10), 1.0)
    fresh = Store(tmp_path / "store")
    assert fresh.get(path, "ga", "v1", 10, 0) is None and fresh.get(path, "ga", "v2", 10, 1) is not None


def test_damaged_entries_and_files_cost_only_themselves(tmp_path):
    path = landscape(tmp_path)
    store = Store(tmp_path / "store")
    for seed in range(3):
        store.put(path, "ga", "v1", 10, seed, np.linspace(0.1, 1, 10), 1.0)
    (f,) = (tmp_path / "store").glob("*.json")
    doc = json.loads(f.read_text())
    curves = doc["runs"]["ga"]["curves"]
    curves["0"] = [[0, 0.5], [3, 2.0]]             # a share above 1
    curves["1"] = [[2, 0.5]]                        # does not start at the first measurement
    f.write_text(json.dumps(doc))
    fresh = Store(tmp_path / "store")
    assert fresh.get(path, "ga", "v1", 10, 0) is None and fresh.get(path, "ga", "v1", 10, 1) is None
    assert fresh.get(path, "ga", "v1", 10, 2) is not None
    for junk in ("not json", "[1, 2]", '{"sha256": 5}', "[" * 100_000):
        f.write_text(junk)
        assert Store(tmp_path / "store").get(path, "ga", "v1", 10, 2) is None
    big = Store(tmp_path / "store")
    f.write_text(" " * 10)
    curve_store.MAX_FILE_BYTES, saved = 5, curve_store.MAX_FILE_BYTES
    try:
        assert big.get(path, "ga", "v1", 10, 2) is None      # too large to read: ignored
    finally:
        curve_store.MAX_FILE_BYTES = saved


def test_steps_keep_a_curve_small():
    curve = np.concatenate([np.full(100, 0.5), np.full(300, 1.0)])
    steps = curve_store.encode(curve)
    assert steps == [[0, 0.5], [100, 1.0]]
    assert np.array_equal(curve_store.decode(steps, 400), curve)


def test_a_strategy_s_curves_go_stale_with_its_own_sources_only(tmp_path):
    """A change to one search strategy leaves the stored curves of strategies that do not import
    it standing; a change to what they share makes every one stale."""
    tuners = tmp_path / "autotune" / "tuners"
    tuners.mkdir(parents=True)
    (tmp_path / "autotune" / "driver.py").write_text("from .tuners import Staged\nshared = 1\n")
    (tuners / "__init__.py").write_text("from .staged import Staged\n")
    (tuners / "base.py").write_text("class Tuner: pass\n")
    (tuners / "gp.py").write_text("from .base import Tuner\n")
    (tuners / "evo.py").write_text("from . import base\n")
    (tuners / "staged.py").write_text("from .gp import Tuner\nfrom .evo import *\n")
    assert curve_store.strategy_modules(["staged"], tmp_path) == [
        "autotune/tuners/base.py", "autotune/tuners/evo.py", "autotune/tuners/gp.py", "autotune/tuners/staged.py"]

    def code(stem):
        return curve_store.sources_hash(curve_store.tuner_sources([stem], tmp_path), tmp_path)

    before = {stem: code(stem) for stem in ("gp", "evo", "staged")}
    (tuners / "evo.py").write_text("from . import base\nchanged = 1\n")
    assert code("gp") == before["gp"] and code("evo") != before["evo"] and code("staged") != before["staged"]
    before = {stem: code(stem) for stem in ("gp", "evo", "staged")}
    (tmp_path / "autotune" / "driver.py").write_text("from .tuners import Staged\nshared = 2\n")
    assert all(code(stem) != before[stem] for stem in before)


def test_a_reworded_docstring_or_comment_keeps_the_curves():
    def code(text):
        return curve_store.code_text(text)
    base = 'def f(x):\n    """Why."""\n    return x + 1\n'
    assert code(base) == code('def f(x):\n    """Another why, longer."""\n    # a comment\n    return x + 1\n')
    assert code(base) == code('def f(x):\n    return x + 1\n')
    assert code(base) != code('def f(x):\n    """Why."""\n    return x + 2\n')
    assert code('X = 1\n') != code('X = "1"\n')


def test_a_module_no_search_imports_keeps_every_curve(tmp_path):
    """The decorator, the disk cache or the command line changing leaves stored curves standing;
    a module the search imports, even through another, does not."""
    pkg = tmp_path / "autotune"
    (pkg / "tuners").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .driver import tune\nfrom .cache import Cache\n")
    (pkg / "driver.py").write_text("from .records import Record\nfrom .tuners import make\n")
    (pkg / "task.py").write_text("from . import space\n")
    (pkg / "space.py").write_text("SPACE = 1\n")
    (pkg / "records.py").write_text("from .location import where\n")
    (pkg / "location.py").write_text("def where(): return 1\n")
    (pkg / "cache.py").write_text("from .location import where\nclass Cache: pass\n")
    (pkg / "tuners" / "__init__.py").write_text("from .gp import GP\n")
    (pkg / "tuners" / "gp.py").write_text("from ..space import SPACE\n")
    assert curve_store.search_modules(tmp_path) == {
        "autotune/driver.py", "autotune/task.py", "autotune/space.py", "autotune/records.py",
        "autotune/location.py", "autotune/tuners/__init__.py", "autotune/tuners/gp.py"}

    def code():
        return curve_store.sources_hash(curve_store.tuner_sources(["gp"], tmp_path), tmp_path)

    before = code()
    (pkg / "cache.py").write_text("from .location import where\nclass Cache:\n    size = 2\n")
    (pkg / "__init__.py").write_text("from .driver import tune\n")
    assert code() == before
    (pkg / "location.py").write_text("def where(): return 2\n")
    assert code() != before
