"""Run a command while N CPU-bound processes load the machine, then stop them.

The test suite must pass on a busy machine, not only on an idle one (CI runs right after
other work, and MPI ranks busy-poll).  This starts `--procs` processes that each spin on
one core, runs the command, and ends the load however the command ends (its exit status,
Ctrl-C, SIGTERM).  It prints the load average before and after, and the command's time.

Usage::

    python benchmarks/load.py --procs 4 -- make test

The load processes are started in their own process group and killed as a group, so none
outlives this script, even when it is interrupted.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

__all__ = ["main"]

#: A load process: spin forever on pure Python arithmetic.
SPIN = "x = 0\nwhile True:\n    x = (x * 31 + 7) % 1000003\n"


def _loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Run COMMAND while N CPU-bound processes load the machine.",
        epilog="example: python benchmarks/load.py --procs 4 -- make test")
    parser.add_argument("--procs", type=int, default=4, help="number of spinning processes (default 4)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --, e.g. -- make test")
    if args.procs < 1:
        parser.error(f"--procs must be at least 1, got {args.procs}")

    # one process group for all spinners (the first one's): killpg ends them together
    first = subprocess.Popen([sys.executable, "-c", SPIN], process_group=0)
    group = first.pid
    spinners = [first]
    try:
        for _ in range(args.procs - 1):
            spinners.append(subprocess.Popen([sys.executable, "-c", SPIN], process_group=group))
    except BaseException:
        os.killpg(group, signal.SIGKILL)
        raise

    def stop(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    print(f"load: {args.procs} spinning processes (group {group}); load average {_loadavg()}",
          flush=True)
    start = time.monotonic()
    status = 1
    try:
        status = subprocess.call(command)
    except KeyboardInterrupt:
        status = 130
    finally:
        os.killpg(group, signal.SIGKILL)
        for s in spinners:
            s.wait()
    print(f"load: command ended with status {status} after {time.monotonic() - start:.0f} s; "
          f"load average {_loadavg()}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
