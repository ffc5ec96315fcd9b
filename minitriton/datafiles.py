"""Opening files whose content is data others may have written (landscapes, records, cache
entries, transfer sources): what lies at the path may make a process hang, never run code.

A FIFO opened for reading waits for a writer that may never come, a device may never end.  So a
data file is opened without waiting and refused unless it is a regular file: the reader gets an
OSError naming the path and what it found there, and goes on as it does for a file it cannot read.
"""
from __future__ import annotations

import errno
import os
import stat

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


def kind_of(mode: int) -> str:
    """What a file of this st_mode is, in words."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def regular_stat(fd: int, path) -> os.stat_result:
    """The stat of the open file `fd`; OSError naming `path` and what it is unless a regular file
    (for a writer that opened a path without waiting, as the records log's appender does)."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, f"{kind_of(st.st_mode)}, not a regular file", str(path))
    return st


def open_regular(path, follow_links: bool = True):
    """A binary file object reading the regular file at `path`.  Anything else (a FIFO, a device,
    a socket, a directory) raises OSError without blocking, its strerror saying what it is; with
    `follow_links=False`, a symbolic link is refused too."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | (0 if follow_links else getattr(os, "O_NOFOLLOW", 0))
    fd = os.open(path, flags)
    try:
        regular_stat(fd, path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def is_special(path) -> bool:
    """Whether something other than a regular file, a directory or a link lies at `path`
    (a FIFO, a device, a socket): a database opened there would wait on it for ever."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))
