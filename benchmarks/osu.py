"""tuwviz's timings next to OSU Micro-Benchmarks' for the library's Gather, Gatherv, Allgatherv.

OSU Micro-Benchmarks (osu_gather, osu_gatherv, osu_allgatherv) are the usual anchor for
"how fast is this MPI's collective".  This script builds them from their public source
with the MPI tuwviz uses, runs them and ``tuwviz bench`` (algorithm ``native``, root 0,
MPI_BYTE, equal blocks of the same sizes, the same ranks and environment) in turns, and
prints per size, as the median over the turns:

* OSU's "Avg Latency" (each rank's mean over iterations, averaged over ranks);
* tuwviz with ``--statistic osu`` (the same statistic, tuwviz's timing loop);
* tuwviz's own statistic (median over repetitions of the slowest rank);

and how many sizes agree within 10 %.  The difference between the last two is the
statistic alone; between the first two, the harness (OSU times back-to-back calls after a
barrier as tuwviz does, but its ranks start MPI single-threaded where mpi4py's ranks ask for
MPI_THREAD_MULTIPLE, unless tuwviz's worker asks for less; see the README).

OSU is distributed as a tarball from mvapich.cse.ohio-state.edu; it is on neither PyPI,
npm nor Debian.  Unpack it anywhere and pass ``--osu-source DIR`` (or set ``OSU_SOURCE``);
the tree is copied to ``build/osu`` and built there (configure, make) with the venv's mpicc.
Without a source the script says so and exits with status 2.

Run::

    python benchmarks/osu.py --osu-source ~/osu-micro-benchmarks-7.4
    python benchmarks/osu.py --osu-source DIR --np 2,4 --max-bytes 262144 --turns 3

A benchmark, not a test: it asserts nothing; the load average is printed with the numbers.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

# This checkout's tuwviz, also when another one is installed in the environment.
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tuwviz.experiments.bench import bench  # noqa: E402
from tuwviz.collectives import collective  # noqa: E402
from tuwviz.kernels import find_mpicc  # noqa: E402
from tuwviz.run.launch import local_mpi_command, loopback_env, mpi_env  # noqa: E402

PROGRAMS = {"gather": "osu_gather", "gatherv": "osu_gatherv", "allgatherv": "osu_allgatherv"}
BUILD = REPO / "build" / "osu"


class NotBuilt(Exception):
    """OSU could not be built; the message says why."""


def find_source(given: str | None) -> Path:
    src = given or os.environ.get("OSU_SOURCE")
    if not src:
        raise NotBuilt("no OSU source given. OSU Micro-Benchmarks are distributed as a tarball "
                       "from mvapich.cse.ohio-state.edu (not on PyPI, npm or Debian); unpack "
                       "it and pass --osu-source DIR or set OSU_SOURCE")
    src = Path(src).expanduser()
    if not (src / "configure").is_file():
        raise NotBuilt(f"{src} is not an OSU source tree (no configure script there)")
    if not any(src.rglob("osu_gather.c")):
        raise NotBuilt(f"{src} has no osu_gather.c: not OSU Micro-Benchmarks' source")
    return src


def _run(cmd: list[str], cwd: Path, what: str, env: dict | None = None) -> None:
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-15:])
        raise NotBuilt(f"{what} failed (exit {r.returncode}):\n{tail}")


def build(src: Path) -> dict[str, Path]:
    """Copy `src` to build/osu and build the three programs there; their paths."""
    mpicc = find_mpicc()
    tree = BUILD / "src"
    exes = {c: next(tree.rglob(name), None) if tree.exists() else None
            for c, name in PROGRAMS.items()}
    if all(e is not None and e.is_file() and os.access(e, os.X_OK) and e.suffix == ""
           for e in exes.values()):
        return exes
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(src, tree, symlinks=True)
    env = {**os.environ, "CC": mpicc, "CXX": str(Path(mpicc).with_name("mpicxx"))}
    print(f"building OSU in {tree} with {mpicc} ...", file=sys.stderr)
    _run(["./configure", f"CC={mpicc}", f"CXX={env['CXX']}"], tree, "OSU's configure", env)
    where = next(tree.rglob("osu_gather.c")).parent
    _run(["make", "-j2", *PROGRAMS.values()], where, "building OSU's collectives", env)
    exes = {c: where / name for c, name in PROGRAMS.items()}
    missing = [str(e) for e in exes.values() if not e.is_file()]
    if missing:
        raise NotBuilt(f"make finished but {missing[0]} is missing")
    return exes


def run_osu(exe: Path, ranks: int, max_bytes: int, iters: int) -> dict[int, float]:
    """OSU's Avg Latency (µs) per size from one run of `exe` on `ranks` ranks."""
    env = {**os.environ, **loopback_env(), **mpi_env(ranks)}
    cmd = [*local_mpi_command(), "-n", str(ranks), str(exe), "-m", str(max_bytes),
           "-i", str(iters), "-f"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"{exe.name} on {ranks} ranks failed: {r.stderr.strip()[-500:]}")
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if parts and parts[0].isdigit() and len(parts) >= 2:
            out[int(parts[0])] = float(parts[1])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--osu-source", help="OSU Micro-Benchmarks source tree (or OSU_SOURCE)")
    ap.add_argument("--np", default="2,4", help="rank counts (default 2,4)")
    ap.add_argument("--collectives", default="gather,gatherv,allgatherv")
    ap.add_argument("--max-bytes", type=int, default=1 << 18,
                    help="largest block per process, bytes (default 262144)")
    ap.add_argument("--iters", type=int, default=200, help="iterations per size (default 200)")
    ap.add_argument("--turns", type=int, default=3,
                    help="OSU and tuwviz take turns this often; medians over turns (default 3)")
    args = ap.parse_args(argv)
    try:
        exes = build(find_source(args.osu_source))
    except NotBuilt as exc:
        print(f"OSU Micro-Benchmarks could not be built: {exc}", file=sys.stderr)
        return 2
    import numpy as np

    sizes = [1 << k for k in range(args.max_bytes.bit_length()) if 1 << k <= args.max_bytes]
    colls = [c.strip() for c in args.collectives.split(",") if c.strip()]
    for n in (int(x) for x in args.np.split(",")):
        over = n > (os.cpu_count() or 1)
        for coll in colls:
            runs: dict[str, list[dict[int, float]]] = {"osu": [], "tuwviz_osu": [], "tuwviz": []}
            for _ in range(args.turns):
                runs["osu"].append(run_osu(exes[coll], n, args.max_bytes, args.iters))
                for stat, key in (("osu", "tuwviz_osu"), ("slowest", "tuwviz")):
                    df = bench(coll, ["native"], ps=[n], dists=["same"], bs=sizes,
                               datatype="byte", root=0 if collective(coll).rooted else None,
                               reps=args.iters, warmup=10,
                               rounds=1, statistic=stat, progress=False)
                    col = "mean_us" if stat == "osu" else "median_us"
                    runs[key].append(dict(zip(df["b"].astype(int), df[col].astype(float))))
            med = {k: {s: float(np.median([r[s] for r in v if s in r])) for s in sizes}
                   for k, v in runs.items()}
            agree = sum(abs(med["tuwviz_osu"][s] / med["osu"][s] - 1) <= 0.10 for s in sizes)
            print(f"\n{coll}, {n} ranks ({'oversubscribed' if over else 'not oversubscribed'}),"
                  f"{' root 0,' if collective(coll).rooted else ''} MPI_BYTE, load {os.getloadavg()[0]:.1f}; median of {args.turns} "
                  f"turns, us:")
            print(f"{'bytes':>8} {'OSU avg':>10} {'tuwviz osu':>11} {'ratio':>6} "
                  f"{'tuwviz slowest':>15} {'ratio':>6}")
            for s in sizes:
                o, t, w = med["osu"][s], med["tuwviz_osu"][s], med["tuwviz"][s]
                print(f"{s:>8} {o:>10.2f} {t:>11.2f} {t / o:>6.2f} {w:>15.2f} {w / o:>6.2f}")
            print(f"tuwviz --statistic osu within 10 % of OSU on {agree} of {len(sizes)} sizes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
