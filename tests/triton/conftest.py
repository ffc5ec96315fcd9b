"""Triton's language tests take a `device` fixture; here every array lives on the host."""
import pytest

import minitriton as triton


@pytest.fixture
def device():
    return "cpu"


@pytest.fixture
def with_allocator():
    """Triton's tests that may need device scratch memory (tensor descriptors) install an
    allocator first; minitriton's launches allocate on the host as they go, so there is none to set."""
    return None


@pytest.fixture(autouse=True)
def _tuning_cache_in_a_temporary_directory(tmp_path, monkeypatch):
    """Ported tests that autotune keep their results out of the user's cache."""
    monkeypatch.setenv("MINITRITON_CACHE_DIR", str(tmp_path / "minitriton-cache"))


@pytest.fixture
def debug_mode(monkeypatch):
    """Triton checks `tl.device_assert` in debug mode only (TRITON_DEBUG=1, or `debug=True`); the
    ported tests whose kernels check their values with it run in it, so that the checks count."""
    monkeypatch.setenv("TRITON_DEBUG", "1")


@pytest.fixture
def fresh_triton_cache():
    """Triton's tests that must compile afresh clear its kernel cache; minitriton keeps none."""
    return None


@pytest.fixture
def fresh_knobs(monkeypatch):
    """Triton's fixture: `triton.knobs` with nothing set in code and no environment variable of a
    knob set, put back as it was after the test."""
    groups = {name: g for name, g in vars(triton.knobs).items() if isinstance(g, triton.knobs.base_knobs)}
    for name, group in groups.items():
        for knob in group.knob_descriptors.values():
            if getattr(knob, "key", None):
                monkeypatch.delenv(knob.key, raising=False)
        monkeypatch.setattr(triton.knobs, name, group.copy().reset())
    return triton.knobs
