"""`python -m autotune`: the tuning cache, numerical checks, and the demo.

  list                 tuned entries in the cache
  show KEY             one entry and its whole tuning (a key prefix is enough)
  export [-o FILE]     every entry as JSON
  clear [KEY]          remove one entry (by prefix) or all of them (--records: the measurements too)
  verify KERNEL|KEY    run a library kernel, or a cached entry's kernel, under several configs: they must agree
  demo                 tune the library matmul on the lecture's shapes and check its numbers

Errors are one line on stderr (exit status 1); options may come before or after the command.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap


from . import report, verify
from .cache import TuningCache


class CommandError(Exception):
    """A user error: printed as one line, no traceback."""


def _entry(cache, prefix):
    """The one entry whose key starts with `prefix`."""
    found = cache.find(prefix)
    if not found:
        raise CommandError(f"no cache entry with key starting {prefix!r} in {cache.dir}")
    exact = [e for e in found if e["key"] == prefix]
    if len(found) > 1 and not exact:
        keys = ", ".join(e["key"][:12] for e in found[:5])
        raise CommandError(f"key prefix {prefix!r} is ambiguous: it matches {len(found)} entries ({keys}"
                           f"{', ...' if len(found) > 5 else ''}); give more characters")
    return exact[0] if exact else found[0]


def _tuner_name(settings):
    t = settings.get("tuner")
    return t.get("class", "?").rsplit(".", 1)[-1] if isinstance(t, dict) else "?" if t is None else str(t)


def _reader(args) -> TuningCache:
    """The cache a command reads: never created by reading it."""
    return TuningCache(args.cache_dir, create=False)


def cmd_list(args):
    cache = _reader(args)
    rows = cache.entries()
    print(f"{len(rows)} tuned entries in {cache.dir}" + ("" if cache.dir.exists() else " (no such directory)"))
    if not rows:
        return
    names = [e.get("kernel", "?") + e.get("args", "") for e in rows]
    width = min(max(len("kernel and key values"), *map(len, names)), 64)
    print(f"{'key':12}  {'kernel and key values':{width}}  {'tuner':10}  {'measured':>8}  {'best µs':>9}  config")
    for e, name in zip(rows, names):
        c = e["config"]
        shown = name if len(name) <= width else textwrap.shorten(name, width, placeholder=" ...")
        print(f"{e['key'][:12]}  {shown:{width}}  {_tuner_name(e.get('settings', {})):10}  "
              f"{e.get('measured', '?'):>8}  {e.get('time', float('nan')) * 1e6:>9.1f}  {c['kwargs']} warps={c['num_warps']} "
              f"stages={c['num_stages']}")


def cmd_show(args):
    cache = _reader(args)
    e = _entry(cache, args.key)
    print(report.show(e, cache.log.read(e["key"]), plot=args.plot, knobs=args.knobs))


def cmd_export(args):
    entries = _reader(args).entries()
    data = json.dumps(entries, indent=2, sort_keys=True, default=str)
    if args.output:
        tmp = f"{args.output}.tmp-{os.getpid()}"
        try:  # written whole or not at all
            with open(tmp, "w") as f:
                f.write(data + "\n")
            os.replace(tmp, args.output)
        except OSError as e:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise CommandError(f"cannot write {args.output}: {e.strerror or e}") from None
        print(f"wrote {len(entries)} entries to {args.output}")
    else:
        print(data)


def cmd_clear(args):
    cache = _reader(args)
    if args.key is not None:  # (an empty prefix is a prefix, never "everything")
        n, gone = int(cache.delete(_entry(cache, args.key)["key"])), 0
    else:
        n, gone = cache.clear(records=args.records)
    print(f"removed {n} entries" + (f" and the records of {gone} measurements" if args.records else "") +
          f" from {cache.dir}")


def _shape(text):
    try:
        shape = {k.strip(): int(v) for k, v in (part.split("=") for part in text.split(","))}
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shape must look like M=200,N=300,K=100, got {text!r}") from None
    bad = {k: v for k, v in shape.items() if v < 1}
    if bad:
        raise argparse.ArgumentTypeError(f"--shape sizes must be positive, got {bad}")
    return shape


def cmd_verify(args):
    if args.kernel in verify.library_checks():
        if args.shape is None:
            raise CommandError(f"verify {args.kernel} needs --shape, e.g. --shape M=200,N=300,K=100")
        print(verify.run(args.kernel, args.shape, args.configs, args.seed))
        return
    cache = _reader(args)
    print(verify.run_entry(_entry(cache, args.kernel), cache.log.read(), args.configs, args.seed, args.origin))


def cmd_demo(args):
    verify.library_demo()(quick=args.quick)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not the usage block
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def main(argv=None):
    p = _Parser(prog="python -m autotune", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cache-dir", default=None, help="cache directory (default: $MINITRITON_CACHE_DIR or ~/.cache/minitriton)")
    common = _Parser(add_help=False)  # the same option after the command
    common.add_argument("--cache-dir", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("list", parents=[common]).set_defaults(fn=cmd_list)
    s = sub.add_parser("show", parents=[common])
    s.add_argument("key")
    s.add_argument("--plot", metavar="FILE.png", help="draw the best-so-far curve and a knob heatmap (matplotlib)")
    s.add_argument("--knobs", nargs=2, metavar=("X", "Y"), help="the two knobs of the heatmap")
    s.set_defaults(fn=cmd_show)
    s = sub.add_parser("export", parents=[common])
    s.add_argument("-o", "--output")
    s.set_defaults(fn=cmd_export)
    s = sub.add_parser("clear", parents=[common])
    s.add_argument("key", nargs="?")
    s.add_argument("--records", action="store_true", help="also delete the measurement records (resume data)")
    s.set_defaults(fn=cmd_clear)
    s = sub.add_parser("verify", parents=[common])
    s.add_argument("kernel", metavar="KERNEL_OR_KEY",
                   help="matmul, row_sum or softmax (with --shape), or a cache key (prefix): its kernel re-run")
    s.add_argument("--shape", type=_shape)
    s.add_argument("--from", dest="origin", metavar="SCRIPT.py|MODULE",
                   help="where a cached kernel is defined (needed for a script's kernels); only its imports, "
                        "definitions and assignments run")
    s.add_argument("--configs", type=int, default=8)
    s.add_argument("--seed", type=int, default=0)
    s.set_defaults(fn=cmd_verify)
    s = sub.add_parser("demo")
    s.add_argument("--quick", action="store_true")
    s.set_defaults(fn=cmd_demo)
    args = p.parse_args(argv)
    try:
        args.fn(args)
    except CommandError as e:
        print(f"python -m autotune {args.command}: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `export | head`: the reader left; say nothing more
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except MemoryError:
        print(f"python -m autotune {args.command}: not enough memory for this request", file=sys.stderr)
        return 1
    except (ValueError, TypeError, OSError, RuntimeError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"python -m autotune {args.command}: {type(e).__name__}: {first}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
