"""`triton.knobs` (minitriton/knobs.py): knobs read their environment variable until code sets
them; the autotuner prints, keeps results on disk and tells a listener as they say."""
import numpy as np
import pytest

import minitriton as mt
from autotune.cache import TuningCache
from tests.test_autotune import CONFIGS, _call, make


@pytest.fixture
def knobs(monkeypatch):
    for group in (mt.knobs.autotuning, mt.knobs.runtime):
        monkeypatch.setattr(group, "set_values", {})
    monkeypatch.delenv("TRITON_PRINT_AUTOTUNING", raising=False)
    monkeypatch.delenv("TRITON_CACHE_AUTOTUNING", raising=False)
    return mt.knobs


def test_a_knob_reads_its_variable_until_set_and_a_scope_puts_it_back(knobs, monkeypatch):
    assert knobs.autotuning.print is False and knobs.runtime.interpret is True
    monkeypatch.setenv("TRITON_PRINT_AUTOTUNING", "1")
    assert knobs.autotuning.print is True
    with knobs.autotuning.scope():
        knobs.autotuning.print = False
        knobs.autotuning.listener = print
        assert knobs.autotuning.print is False and knobs.autotuning.listener is print
    assert knobs.autotuning.print is True and knobs.autotuning.listener is None
    knobs.autotuning.print = False
    del knobs.autotuning.print
    assert knobs.autotuning.print is True


def test_the_listener_hears_of_each_tuning_and_of_each_disk_cache_hit(knobs, tmp_path, capsys):
    heard = []
    knobs.autotuning.listener = lambda **kw: heard.append(kw)
    knobs.autotuning.print = True
    _call(make(tmp_path), 100)
    assert len(heard) == 1 and heard[0]["cache_hit"] is False and heard[0]["duration"] > 0
    told = heard[0]
    assert told["best_config"] in CONFIGS and set(told["configs_timings"]) <= set(CONFIGS)
    fastest = min(t[0] for t in told["configs_timings"].values())     # ms; the choice settles near-ties again
    assert fastest <= told["configs_timings"][told["best_config"]][0] <= 1.05 * fastest
    assert told["fn"].__name__ == "scale_kernel" and "minitriton autotuning for" in capsys.readouterr().out
    _call(make(tmp_path), 100)                      # a new autotuner: its first call finds the disk entry
    assert len(heard) == 2 and heard[1]["cache_hit"] is True and heard[1]["duration"] is None
    assert heard[1]["best_config"] == told["best_config"]


def test_the_cache_knob_keeps_results_on_disk_without_cache_results(knobs, tmp_path):
    _call(make(tmp_path, cache_results=False), 100)
    assert TuningCache(tmp_path).entries() == []
    knobs.autotuning.cache = True
    _call(make(tmp_path, cache_results=False), 100)
    assert len(TuningCache(tmp_path).entries()) == 1
