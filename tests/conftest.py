"""Fixtures shared by the tests of minitriton's fast paths."""
import pytest


@pytest.fixture
def spy(monkeypatch):
    """spy(module, name): wrap module.name so that each call's result is appended to the list
    returned (a test then checks that the path it is about was taken)."""
    def install(module, name):
        seen = []
        original = getattr(module, name)

        def wrapper(*args, **kwargs):
            out = original(*args, **kwargs)
            seen.append(out)
            return out
        monkeypatch.setattr(module, name, wrapper)
        return seen
    return install
