"""A test body run with one of the executor's fast paths switched on, then off (runs, box masks,
deferred arithmetic each have a `set_*` switch that returns the previous setting): the two
results, which the tests compare to the bit."""


def on_and_off(switch, fn):
    """(fn() with switch(True), fn() with switch(False)); the setting is restored after."""
    prev = switch(True)
    try:
        on = fn()
        switch(False)
        off = fn()
    finally:
        switch(prev)
    return on, off
