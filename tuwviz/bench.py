"""Benchmark sweeps: time algorithms side by side and save each row as it is measured.

Every row is one measurement of one algorithm on one problem: the time of a repetition
is the slowest rank's (barrier before each repetition, timing loop in C), summarised as
min/median/mean/max in microseconds.  ``m`` and ``m'`` are the gatherv paper's totals
(``sum m_i`` and ``p max m_i``, in elements).  The library's collective runs as the
algorithm ``native`` in the same run, and ``ratio_to_native`` divides each algorithm's
median by native's median on the same problem.  Run metadata (MPI library, ranks, hosts,
oversubscription, MPICH heavy-yield mode, date, git commit) is on every row.

Examples
--------
>>> df = bench("gatherv", ["native", "linear"], ps=[2], bs=[1, 100], reps=5, progress=False)
>>> list(zip(df["algorithm"], df["b"], df["m_prime"]))
[('native', 1, 2), ('linear', 1, 2), ('native', 100, 200), ('linear', 100, 200)]
"""
from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Iterable

from . import kernels
from .collectives import collective
from .errors import TuwvizError
from .launch import check_ranks, run_mpiexec
from .params import check_params, expand, label
from .problems import make_problem
from .sweep import Backend, distributions, run_metadata

__all__ = ["ROW_FIELDS", "ResultWriter", "bench", "bench_cases"]

ROW_FIELDS = [
    "collective", "algorithm", "params", "p", "root", "distribution", "b", "m", "m_prime",
    "datatype",
    "reps", "warmup", "min_us", "median_us", "mean_us", "max_us", "ratio_to_native",
    "mpi_library", "mpi4py", "ranks", "hosts", "oversubscribed", "heavy_yield", "backend",
    "date", "git_commit", "tuwviz",
]


class ResultWriter:
    """Append rows to a CSV file, one flushed line per row, so a crash loses nothing.

    An existing file is appended to if it has the same columns; otherwise an error says
    so instead of mixing two layouts in one file.
    """

    def __init__(self, path: str | os.PathLike, fields: list[str] = ROW_FIELDS):
        self.path = Path(path)
        self.fields = fields
        if self.path.exists() and self.path.stat().st_size > 0:
            with open(self.path, newline="") as f:
                header = next(csv.reader(f), [])
            if header != fields:
                raise TuwvizError(
                    f"{self.path} exists with other columns; choose another --out file"
                )
            new = False
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            new = True
        self._file = open(self.path, "a", newline="")
        self._writer = csv.DictWriter(self._file, fieldnames=fields, extrasaction="ignore")
        if new:
            self._writer.writeheader()
            self._file.flush()

    def write(self, row: dict) -> None:
        self._writer.writerow(row)
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def bench_cases(
    collective_name: str,
    algorithms: Iterable[str],
    ps: Iterable[int],
    dists: Iterable[str] | None = ("same",),
    bs: Iterable[int] = (1,),
    root: int | None = None,
    seed: int = 0,
    reps: int = 75,
    warmup: int = 10,
    time_limit: float = 0.0,
    datatype: str = "int",
    params: dict[str, list] | None = None,
) -> list[dict]:
    """Cases of a sweep, ``native`` first within each problem (so ratios can be formed).

    The defaults of `reps` and `warmup` are the gatherv paper's (75 and 10, Section 5).
    `params` is a grid of tuning parameters, e.g. ``{"block_bytes": [0, 4096]}``; each
    algorithm runs once per combination of the values it takes (:func:`tuwviz.params.expand`).
    """
    coll = collective(collective_name).name
    algorithms = list(algorithms)
    for a in algorithms:
        kernels.find_algorithm(coll, a)  # unknown names fail before anything starts
    if reps < 1 or warmup < 0:
        raise ValueError(f"need reps >= 1 and warmup >= 0, got reps={reps}, warmup={warmup}")
    order = sorted(algorithms, key=lambda a: a != "native")
    cases = []
    for p in ps:
        for dist in distributions(dists, coll):
            for b in bs:
                pr = make_problem(coll, p, dist, b, root=root, seed=seed, datatype=datatype)
                for alg in order:
                    for prm in expand(coll, alg, params):
                        cases.append({"mode": "measure", "problem": pr.to_dict(),
                                      "algorithm": alg, "reps": reps, "warmup": warmup,
                                      "time_limit": time_limit, "data_seed": seed,
                                      "params": check_params(coll, alg, prm, p)})
    return cases


def _row(case: dict, result: dict, meta: dict, native_median: dict) -> dict:
    pr = case["problem"]
    key = (pr["p"], pr["root"], pr["distribution"], pr["b"])
    if case["algorithm"] == "native":
        native_median[key] = result["median_us"]
    base = native_median.get(key)
    counts = pr["counts"]
    return {
        "collective": pr["collective"], "algorithm": case["algorithm"],
        "params": label(case.get("params")), "p": pr["p"],
        "root": pr["root"], "distribution": pr["distribution"], "b": pr["b"],
        "m": sum(counts), "m_prime": pr["p"] * max(counts), "datatype": pr["datatype"],
        **result,
        "ratio_to_native": result["median_us"] / base if base else "",
        **meta,
    }


def bench(
    collective_name: str,
    algorithms: Iterable[str] = ("native",),
    ps: Iterable[int] = (4,),
    dists: Iterable[str] | None = ("same",),
    bs: Iterable[int] = (1,),
    *,
    out: str | os.PathLike | None = None,
    root: int | None = None,
    seed: int = 0,
    reps: int = 75,
    warmup: int = 10,
    time_limit: float = 0.0,
    datatype: str = "int",
    params: dict[str, list] | None = None,
    backend: Backend | None = None,
    backend_name: str | None = None,
    progress: bool = True,
):
    """Measure algorithms of one collective side by side; return a pandas DataFrame.

    Parameters
    ----------
    collective_name : str
        The collective (``"gatherv"``).
    algorithms : iterable of str
        Registered algorithm names; ``native`` is the MPI library's collective.
    ps, dists, bs : iterables
        Process counts, block-size distributions and average block sizes ``b`` to sweep.
    datatype : str
        Element type (``"int"``; ``"byte"`` makes ``b`` a size in bytes).
    params : dict of lists, optional
        Tuning-parameter grid, e.g. ``{"block_bytes": [0, 4096, 65536]}`` for the
        pipelined ring's block size; each row's ``params`` column says which values it used.
    out : path, optional
        CSV file; each row is appended and flushed the moment it is measured.
    root : int, optional
        Root (default ``p // 2``, as in the gatherv paper).
    reps, warmup : int
        Timed repetitions and untimed warm-up calls per measurement.
    time_limit : float
        Seconds a measurement may take (0: no limit); exceeding it raises
        :class:`~tuwviz.errors.TimeLimitExceeded` after saving the rows measured so far.
    backend : callable, optional
        Where to run (default: fresh ranks under mpiexec, one run per p, so no idle
        ranks share the cores with a measurement).
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        One row per measurement, columns :data:`ROW_FIELDS`.
    """
    import pandas as pd
    from tqdm.auto import tqdm

    cases = bench_cases(collective_name, algorithms, ps, dists, bs, root, seed, reps, warmup,
                        time_limit, datatype, params)
    if backend is None:
        for p in {c["problem"]["p"] for c in cases}:
            check_ranks(p)
    rows: list[dict] = []
    writer = ResultWriter(out) if out is not None else None
    bar = tqdm(total=len(cases), desc=f"bench {collective_name}", disable=not progress,
               unit="run", mininterval=0.5)
    native_median: dict = {}
    meta: dict = {}
    name = backend_name or ("mpiexec" if backend is None else "custom")

    def on_start(rank_infos):
        meta.clear()
        meta.update(run_metadata(rank_infos, name))

    def on_result(i, case, result):
        row = _row(case, result, meta, native_median)
        rows.append(row)
        if writer:
            writer.write(row)
        bar.set_postfix_str(f"p={row['p']} {row['distribution']} b={row['b']} {row['algorithm']} "
                            f"{row['params']}".rstrip())
        bar.update()

    try:
        # one run per p: no idle ranks share the cores with a measurement
        for p in sorted({c["problem"]["p"] for c in cases}):
            chunk = [c for c in cases if c["problem"]["p"] == p]
            (backend or run_mpiexec)(p, chunk, on_result, on_start=on_start)
    finally:
        bar.close()
        if writer:
            writer.close()
    return pd.DataFrame(rows, columns=ROW_FIELDS)
