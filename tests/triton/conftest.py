"""Triton's language tests take a `device` fixture; here every array lives on the host."""
import pytest


@pytest.fixture
def device():
    return "cpu"
