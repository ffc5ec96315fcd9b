"""Tuning results on disk (diskcache), shared by processes, robust to crashes, faults and junk.

Where it lives and whether it is used: cache_location.py.

Faults lose nothing: a process tuning a key holds an OS file lock that dies with it (a killed
tuning blocks nobody), and a waiting process says whom it waits for.  A results database is
set aside only when SQLite says it is corrupt, never on an I/O error: with a read-only or full
cache directory, what is there is still served and new results are kept in memory, with one
warning naming the directory.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import pathlib
import socket
import sqlite3
import stat
import sys
import tempfile
import time
import warnings

import diskcache

import minitriton
from minitriton.datafiles import is_special, open_regular

from .cache_location import default_dir
from .records import RecordLog
from .space import Config

try:
    import fcntl
except ImportError:  # not POSIX: no cross-process lock, tunings may then run twice
    fcntl = None

VERSION = 2       # of an entry's format: 2 is JSON text (1 was a pickle)
KEY_VERSION = 1   # of what a cache key digests (kept: an old entry is found, refused and replaced)
_WARNED: set = set()


def digest(*parts) -> str:
    """A stable key for everything that decides a tuning's answer, the code that measured it
    included (code_key)."""
    return hashlib.sha256(json.dumps([KEY_VERSION, code_key(), *parts], sort_keys=True,
                                     default=repr).encode()).hexdigest()[:32]


@functools.lru_cache(maxsize=None)
def code_key() -> str:
    """A hash of minitriton's and autotune's own source, as Triton's cache keys hold its
    compiler's (triton_key): what a config measured, and whether it ran at all, depends on the
    executor and the simulated GPU, so a new or edited version tunes afresh instead of serving
    its predecessor's results (a config that an older executor failed to run stays failed
    otherwise, since resumed tunings skip what the log says was measured)."""
    h = hashlib.sha256()
    for package in (pathlib.Path(minitriton.__file__).parent, pathlib.Path(__file__).parent):
        for path in sorted(package.rglob("*.py")):
            h.update(str(path.relative_to(package.parent)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _warn_once(directory, why):
    if str(directory) not in _WARNED:
        _WARNED.add(str(directory))
        warnings.warn(f"minitriton: the tuning cache {directory} cannot be written ({why}); serving what it holds "
                      f"and keeping new results in memory", RuntimeWarning, stacklevel=4)


def _warn_foreign(directory, why, what="entries that are not JSON data"):
    if ("foreign", str(directory), what) not in _WARNED:
        _WARNED.add(("foreign", str(directory), what))
        warnings.warn(f"minitriton: the tuning cache {directory} holds {what} ({why}): they are ignored, never "
                      f"loaded, and their keys are tuned again", RuntimeWarning, stacklevel=4)


def _corrupt(db_file: pathlib.Path) -> bool:
    """Whether SQLite itself finds the database damaged (read-only check, changes nothing)."""
    try:
        con = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True)
        try:
            return con.execute("PRAGMA quick_check").fetchone()[0] != "ok"
        finally:
            con.close()
    except sqlite3.OperationalError:
        return False  # cannot even read it: an I/O problem, not corruption
    except sqlite3.DatabaseError:
        return True


MAX_ENTRY_BYTES = 1 << 20   # an entry is a few kilobytes of JSON; anything far larger is junk
MAX_SQLITE_BYTES = 4 * MAX_ENTRY_BYTES   # the longest text or blob SQLite hands over: a larger one is an error,
                                        # not gigabytes in memory (SQLite checks a value's size before reading it)
# diskcache's settings, given explicitly so that values stored in a database never override them
SETTINGS = dict(diskcache.DEFAULT_SETTINGS)


def _bounded(con: sqlite3.Connection) -> sqlite3.Connection:
    con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_SQLITE_BYTES)
    return con


class ForeignEntry(Exception):
    """A stored value that is not JSON text written by this module (a pickle, bytes, a file
    outside the cache): never loaded, so it can never run code."""


def _safe_text(directory: str, filename) -> str:
    """A value diskcache keeps in a file of its own: only inside the cache, only if small."""
    root = os.path.realpath(directory)
    path = os.path.realpath(os.path.join(directory, str(filename)))
    if os.path.commonpath([root, path]) != root:
        raise ForeignEntry(f"a value file outside the cache ({filename!r})")
    try:
        f = open_regular(path, follow_links=False)
    except OSError as e:
        raise ForeignEntry(f"an unreadable value file ({filename!r}: {e.strerror})") from None
    with f:
        data = f.read(MAX_ENTRY_BYTES + 1)
    if len(data) > MAX_ENTRY_BYTES:
        raise ForeignEntry(f"a value file over {MAX_ENTRY_BYTES} bytes ({filename!r})")
    return data.decode("utf-8", errors="replace")


class DataDisk(diskcache.Disk):
    """diskcache's storage for data only.  diskcache pickles what is not a string and unpickles
    what its table says is a pickle, keys included; a results database that others can write
    to would then run their code in every process that reads it.  Here values are JSON text
    (stored raw, or as a text file for a large one), keys are strings, and a row in any other
    form (an older minitriton's pickles, something planted) is refused when read."""

    def put(self, key):
        if not isinstance(key, str):
            raise TypeError(f"tuning cache keys are strings, got {type(key).__name__}")
        return super().put(key)

    def get(self, key, raw):
        return (bytes(key).decode(errors="replace") if isinstance(key, (bytes, memoryview)) else key) if raw else None

    def store(self, value, read, key=diskcache.core.UNKNOWN):
        if not isinstance(value, str) or read:
            raise TypeError(f"the tuning cache stores JSON text, got {type(value).__name__}")
        return super().store(value, read, key=key)

    def fetch(self, mode, filename, value, read):
        if mode == diskcache.core.MODE_RAW and isinstance(value, str):
            return value
        if mode == diskcache.core.MODE_TEXT and not read:
            return _safe_text(self._directory, filename)
        raise ForeignEntry("a pickled value (an older minitriton's format) or one of another type"
                           if mode == diskcache.core.MODE_PICKLE else f"a stored value of mode {mode}")


def decode_entry(text) -> dict | None:
    """An entry from its JSON text, or None for text that is not a small JSON object (deep
    nesting, a huge document and invalid JSON cost only this entry)."""
    if not isinstance(text, str) or len(text) > MAX_ENTRY_BYTES:
        return None
    try:
        entry = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return entry if isinstance(entry, dict) else None


# what each field of an entry holds, where it is present (writers: the decorator, tune_network,
# the generated operators); an entry with a field of another type is no entry (read as a miss)
_NUMBER = (int, float)
FIELD_TYPES = {"kernel": str, "args": str, "device": str, "by": str, "settings": dict, "time": _NUMBER,
               "measured": int, "simulated_seconds": _NUMBER, "created": _NUMBER, "dropped": list,
               "failed_on_cpu": list, "remeasured": (dict, type(None)), "call": (dict, type(None))}


def well_formed(entry: dict) -> bool:
    """Whether an entry's fields hold what this module's writers put there: a config of
    keyword arguments and int warps and stages, and every other known field of its type."""
    cfg = entry.get("config")
    if not (isinstance(cfg, dict) and isinstance(cfg.get("kwargs"), dict) and type(cfg.get("num_warps")) is int
            and type(cfg.get("num_stages")) is int):
        return False
    if not all(k not in entry or (isinstance(entry[k], t) and not isinstance(entry[k], bool))
               for k, t in FIELD_TYPES.items()):
        return False
    pairs = entry.get("dropped", []) + entry.get("failed_on_cpu", [])     # (config, why) as text
    if not all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in pairs):
        return False
    settled = entry.get("remeasured") or {}
    return all(k not in settled or (isinstance(settled[k], t) and (t is bool or not isinstance(settled[k], bool)))
               for k, t in (("contenders", int), ("noise", _NUMBER), ("seconds", _NUMBER), ("changed", bool)))


def offered_config(entry: dict, offered, who: str, where) -> Config | None:
    """The config a cache entry names, if `offered(config)` returns the caller's own config
    equal to it (one of its configs, a point of its space), else None, with a warning, and the
    key is tuned again: whoever can write the cache must not make a launch run a config the user
    never offered, nor fail on one that is not a config at all."""
    cfg = entry["config"]
    try:
        config = offered(Config(cfg["kwargs"], num_warps=cfg["num_warps"], num_stages=cfg["num_stages"]))
    except (KeyError, TypeError, ValueError):
        config = None
    if config is None:
        warnings.warn(f"{who}: the cache entry {str(entry.get('key'))[:12]} in {where} names a config it does not "
                      f"offer ({str(cfg)[:120]}); it is ignored and the key tuned again", RuntimeWarning, stacklevel=4)
    return config


def encode_entry(entry: dict) -> str:
    return json.dumps(entry, sort_keys=True, default=_plain)


def _plain(value):
    """numpy scalars and other number-likes as plain JSON numbers; anything else as its text."""
    item = getattr(value, "item", None)
    if callable(item):
        v = item()
        if isinstance(v, (bool, int, float, str)):
            return v
    return str(value)


class _ReadOnlyResults:
    """What a diskcache results database holds, read straight from its SQLite file when the
    directory cannot be written (diskcache itself must write to open it)."""

    def __init__(self, directory: pathlib.Path):
        self.dir = directory
        db = directory / "cache.db"
        try:  # read-only, seeing what the write-ahead log holds too
            self.con = _bounded(sqlite3.connect(f"file:{db}?mode=ro", uri=True))
            self.con.execute("SELECT count(*) FROM Cache").fetchone()
        except sqlite3.Error:  # the log cannot be opened here: the main file as it is
            self.con = _bounded(sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True))
        if _foreign_schema(self.con):
            self.con.close()
            raise ForeignEntry("tables, views, triggers or indexes diskcache does not make")

    def get(self, key, default=None):
        row = self.con.execute("SELECT mode, filename, value FROM Cache WHERE key = ? AND raw = 1",
                               (key,)).fetchone()
        if row is None:
            return default
        mode, filename, value = row
        if mode == diskcache.core.MODE_RAW and isinstance(value, str):
            return value
        if mode == diskcache.core.MODE_TEXT:
            return _safe_text(str(self.dir), filename)
        raise ForeignEntry("a pickled value (an older minitriton's format) or one of another type")

    def iterkeys(self):
        return _keys(self.con)

    def close(self):
        self.con.close()


def _keys(con: sqlite3.Connection):
    """The keys of a results database: in one query, or row by row when a key is too long to read
    (SQLite refuses it: a planted one then costs only its row)."""
    try:
        return [k for (k,) in con.execute("SELECT key FROM Cache WHERE raw = 1").fetchall()]
    except sqlite3.DataError:
        return list(_keys_by_row(con))


def _keys_by_row(con: sqlite3.Connection):
    return (row[0] for _, row in _rows(con) if row is not None and row[1] == 1)


def _rows(con: sqlite3.Connection):
    """(rowid, (key, raw)) of every row, read one at a time; (rowid, None) for a row whose key
    SQLite refuses to read (longer than MAX_SQLITE_BYTES)."""
    for (rowid,) in con.execute("SELECT rowid FROM Cache").fetchall():
        try:
            yield rowid, con.execute("SELECT key, raw FROM Cache WHERE rowid = ?", (rowid,)).fetchone()
        except sqlite3.DataError:
            yield rowid, None


def _oversized_keys(con: sqlite3.Connection, db_file: pathlib.Path) -> list:
    """Rows whose key SQLite refuses to read (longer than MAX_SQLITE_BYTES).  Looking up any key
    reads the keys it is compared with, whole: one planted key of gigabytes would cost every
    lookup that much memory.  A database smaller than the limit (with its write-ahead log) cannot
    hold one, and is not scanned."""
    wal = db_file.with_name(db_file.name + "-wal")
    if db_file.stat().st_size + (wal.stat().st_size if wal.is_file() else 0) <= MAX_SQLITE_BYTES:
        return []
    try:    # keys are short: an index of them that spills onto overflow pages holds a long one
        indexed = con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'Cache_key_raw'")
        spilled = con.execute("SELECT count(*) FROM dbstat WHERE name = 'Cache_key_raw' AND pagetype = 'overflow'")
        if indexed.fetchone()[0] and not spilled.fetchone()[0]:
            return []
    except sqlite3.OperationalError:
        pass                # an SQLite without the dbstat table: every row is looked at
    return [rowid for rowid, row in _rows(con) if row is None]


@functools.lru_cache(maxsize=1)
def _reference_schema() -> frozenset:
    """(type, name, sql) of every table, index and trigger diskcache makes, read from a new database."""
    with tempfile.TemporaryDirectory() as d:
        diskcache.Cache(d, disk=DataDisk, **SETTINGS).close()
        con = sqlite3.connect(os.path.join(d, "cache.db"))
        try:
            return frozenset(con.execute("SELECT type, name, sql FROM sqlite_master").fetchall())
        finally:
            con.close()


def _foreign_schema(con: sqlite3.Connection) -> list:
    """(type, name) of what a results database holds beyond diskcache's own tables, indexes and
    triggers (a trigger or view someone added would run SQL of theirs, or make each write take for
    ever), and of diskcache's tables if their definition was changed."""
    mine = _reference_schema()
    names = {(t, n) for t, n, _ in mine}
    return [(t, n) for t, n, sql in con.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
            if (t, n, sql) not in mine and not (t == "index" and (t, n) not in names and n.startswith("sqlite_"))]


def _planted_link(results: pathlib.Path) -> str | None:
    """What in the results directory is a symbolic link that SQLite (and _vet) would write through."""
    files = ("cache.db", "cache.db-wal", "cache.db-shm", "cache.db-journal")       # SQLite's of a database
    return results.name if results.is_symlink() else next((n for n in files if (results / n).is_symlink()), None)


def _vet(db_file: pathlib.Path) -> list:
    """Make a results database diskcache's again before diskcache opens it: drop the triggers,
    views and indexes it would not have made, and the settings rows it would not have written
    (diskcache passes a stored `disk_*` setting to its Disk and runs a stored `sqlite_*` one as a
    PRAGMA).  Returns what was removed; raises ForeignEntry if its tables are not diskcache's
    (the caller sets the database aside).  A database that cannot be written is left as it is."""
    if not db_file.is_file():
        return []
    removed = []
    con = _bounded(sqlite3.connect(str(db_file), timeout=60))
    try:
        for kind, name in _foreign_schema(con):
            if kind == "table" and name in ("Cache", "Settings"):
                raise ForeignEntry(f"its {name} table is not diskcache's")
            if kind in ("trigger", "view", "index"):
                con.execute(f'DROP {kind.upper()} IF EXISTS "{name.replace(chr(34), chr(34) * 2)}"')
                removed.append(f"{kind} {name}")
        tables = {n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "Cache" in tables:
            bad = _oversized_keys(con, db_file)
            if bad:     # the key index cannot find them to remove them: diskcache makes it again
                con.execute("DROP INDEX IF EXISTS Cache_key_raw")
                con.executemany("DELETE FROM Cache WHERE rowid = ?", [(r,) for r in bad])
                removed += [f"a key over {MAX_SQLITE_BYTES} bytes (row {r})" for r in bad]
        if "Settings" in tables:
            for (rowid,) in con.execute("SELECT rowid FROM Settings").fetchall():
                try:
                    key, value = con.execute("SELECT key, value FROM Settings WHERE rowid = ?", (rowid,)).fetchone()
                    known = key in SETTINGS or (key in diskcache.core.METADATA and type(value) is int)
                except sqlite3.DataError:
                    key, known = f"row {rowid}", False
                if not known:
                    con.execute("DELETE FROM Settings WHERE rowid = ?", (rowid,))
                    removed.append(f"setting {str(key)[:40]!r}")
        con.commit()
    except sqlite3.OperationalError:
        return []           # read-only or locked: diskcache's own open decides what happens
    finally:
        con.close()
    return removed


def _warn_vetted(directory, removed):
    warnings.warn(f"minitriton: the tuning cache {directory} held what diskcache does not write there, removed: "
                  f"{', '.join(removed[:5])}{' ...' if len(removed) > 5 else ''}", RuntimeWarning, stacklevel=5)


class _Results(diskcache.Cache):
    """diskcache's Cache on connections that refuse a value longer than MAX_SQLITE_BYTES."""

    @property
    def _con(self):
        return _bounded(super()._con)

    def iterkeys(self, reverse=False):
        return _keys(self._con)


def _lock_file(path: pathlib.Path) -> int:
    """An open lock file that is ours to write: never through a symlink, never a file with
    other names (a hard link to someone's file), so the owner stamp truncates nothing else.  A
    planted one is removed (the link, not what it points to) and made afresh."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | nofollow, 0o600)
        except OSError as e:
            if not path.is_symlink():
                raise
            fd = None
        if fd is not None:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                return fd
            os.close(fd)
        warnings.warn(f"minitriton: the lock file {path} was a link to another file; it is replaced, and what it "
                      f"pointed to is left as it was", RuntimeWarning, stacklevel=5)
        os.unlink(path)
    raise OSError(f"cannot make a lock file of its own at {path}")


def _check_owner(directory: pathlib.Path):
    """Warn, as ssh and pip do, when others can write the cache: they would choose the configs
    this user's kernels run with (the cache holds only data, so never what code runs)."""
    try:
        st = directory.stat()
    except OSError:
        return
    why = []
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        why.append(f"it belongs to user id {st.st_uid}, not you ({os.getuid()})")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        why.append(f"it is writable by {'others' if st.st_mode & stat.S_IWOTH else 'its group'} "
                   f"(mode {stat.S_IMODE(st.st_mode):04o})")
    if why and ("owner", str(directory)) not in _WARNED:
        _WARNED.add(("owner", str(directory)))
        warnings.warn(f"minitriton: the tuning cache {directory} can be changed by others: {'; '.join(why)}. "
                      f"Whoever writes there chooses the configs your kernels run with (chmod go-w, or a cache_dir= "
                      f"of your own)", RuntimeWarning, stacklevel=4)


class TuningCache:
    def __init__(self, directory=None, create: bool = True):
        """`create=False`: a reader (the command line's list, show, export, clear, verify) that
        finds no results database there sees an empty cache and leaves none behind."""
        self.dir = pathlib.Path(directory) if directory is not None else default_dir()
        self.memory: dict = {}   # results kept in this process when the directory cannot take them
        self.problem = None      # why the directory cannot be written, if it cannot
        self.db = None
        self.log = RecordLog(self.dir / "records.jsonl", on_error=self._fault)
        if not create and not os.path.lexists(self.dir / "results" / "cache.db"):
            return
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            _check_owner(self.dir)
            self.db = self._open(self.dir / "results")
        except OSError as e:
            self._fault(e)
        except sqlite3.OperationalError as e:
            self._fault(e)
            self._open_read_only()

    def _fault(self, error):
        """The directory cannot take writes: say so once, keep results in memory."""
        if self.problem is None:
            self.problem = getattr(error, "strerror", None) or str(error) or type(error).__name__
            _warn_once(self.dir, self.problem)

    def _open_read_only(self):
        db = self.dir / "results" / "cache.db"
        if db.exists() and not is_special(db):
            try:
                self.db = _ReadOnlyResults(self.dir / "results")
            except sqlite3.Error:
                self.db = None
            except ForeignEntry as e:
                _warn_foreign(self.dir, e)
                self.db = None

    @staticmethod
    def _open(path: pathlib.Path):
        """Open the results database.  One that SQLite finds corrupt, or that is reached through a
        symbolic link (_planted_link), is set aside and started afresh (the records log, which holds
        the measurements, is separate and kept); an I/O error (read-only, disk full) is raised to
        the caller and never costs the database."""
        aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
        link = _planted_link(path)
        if link is not None:
            warnings.warn(f"minitriton: the tuning cache {path.parent} holds a symbolic link as {link}, which SQLite "
                          f"would write through; it is set aside as {aside.name}", RuntimeWarning, stacklevel=4)
            path.rename(aside)
        elif is_special(path / "cache.db"):     # a FIFO there would hold SQLite (and the launch) for ever
            path.rename(aside)
        try:
            removed = _vet(path / "cache.db")
            if removed:
                _warn_vetted(path.parent, removed)
            return _Results(str(path), disk=DataDisk, **SETTINGS)
        except sqlite3.OperationalError:
            raise
        except (sqlite3.DatabaseError, ForeignEntry) as e:
            corrupt = type(e) is sqlite3.DatabaseError and _corrupt(path / "cache.db")
            if type(e) is sqlite3.DatabaseError and not corrupt:
                raise
            if not corrupt:     # what diskcache itself cannot open: a value too long to read, duplicate keys, ...
                warnings.warn(f"minitriton: the tuning cache {path.parent} is not a database minitriton writes ({e}); "
                              f"it is set aside as {aside.name}, never read again, and its keys are tuned afresh",
                              RuntimeWarning, stacklevel=4)
            path.rename(aside)
            return _Results(str(path), disk=DataDisk, **SETTINGS)

    def get(self, key: str) -> dict | None:
        """The stored entry, or None if absent, unreadable, not data written by this module, or
        from another format version: each costs only itself, and the key is tuned again."""
        entry = self.memory.get(key)
        if entry is None and self.db is not None:
            try:
                entry = decode_entry(self.db.get("result:" + key))
            except ForeignEntry as e:
                _warn_foreign(self.dir, e)
                return None
            except Exception:  # a damaged entry is a miss, not a crash; it will be rewritten
                return None
        if not isinstance(entry, dict) or entry.get("version") != VERSION or not isinstance(entry.get("key"), str):
            return None
        if not well_formed(entry):
            _warn_foreign(self.dir, "a field of another type than minitriton writes there",
                          what="entries minitriton did not write")
            return None
        return entry

    def put(self, key: str, entry: dict):
        entry = dict(entry, version=VERSION, key=key, created=time.time())
        text = encode_entry(entry)
        entry = json.loads(text)          # what a reader will see: the same in memory as on disk
        if self.problem is None and isinstance(self.db, diskcache.Cache):
            try:
                self.db.set("result:" + key, text)
                return
            except (OSError, sqlite3.OperationalError) as e:
                self._fault(e)
        self.memory[key] = entry

    @contextlib.contextmanager
    def lock(self, key: str):
        """Held while one process tunes `key`; others wait, then read its answer.  An OS file
        lock: it dies with its holder, however that ends (SIGKILL, out of memory)."""
        fd = None
        if fcntl is not None and self.problem is None:
            path = self.dir / "locks" / f"{key}.lock"
            try:
                path.parent.mkdir(exist_ok=True)
                fd = _lock_file(path)
            except OSError as e:
                self._fault(e)
        if fd is None:
            yield
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = os.pread(fd, 256, 0).decode(errors="replace").strip() or "another process"
                sys.stderr.write(f"minitriton: waiting for {owner} to finish tuning key {key[:12]} "
                                 f"(lock {path})\n")
                sys.stderr.flush()
                fcntl.flock(fd, fcntl.LOCK_EX)
            stamp = f"process {os.getpid()} on {socket.gethostname()}, tuning since {time.strftime('%H:%M:%S')}"
            os.ftruncate(fd, 0)
            os.pwrite(fd, stamp.encode(), 0)
            yield
        finally:
            try:
                os.ftruncate(fd, 0)
            except OSError:
                pass
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def entries(self) -> list[dict]:
        keys = set(self.memory)
        if self.db is not None:
            keys |= {k[len("result:"):] for k in self.db.iterkeys() if isinstance(k, str) and k.startswith("result:")}
        out = [e for e in (self.get(k) for k in keys) if e is not None]
        return sorted(out, key=lambda e: e.get("created", 0))

    def find(self, prefix: str) -> list[dict]:
        return [e for e in self.entries() if e["key"].startswith(prefix)]

    def delete(self, key: str) -> bool:
        gone = self.memory.pop(key, None) is not None
        if isinstance(self.db, diskcache.Cache):
            gone = bool(self.db.delete("result:" + key)) or gone
        return gone

    def clear(self, records: bool = False) -> tuple[int, int]:
        """Remove every entry; the measurement records too only when asked (they resume
        interrupted tunings and teach later ones).  Returns (entries, records) removed."""
        n = len(self.entries())
        self.memory.clear()
        if isinstance(self.db, diskcache.Cache):
            self.db.clear()
        gone = 0
        if records and self.log.path.exists():
            gone = len(self.log.read())
            self.log.path.unlink()
        return n, gone

    def close(self):
        if self.db is not None:
            self.db.close()
