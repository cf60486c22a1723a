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
import json
import os
from pathlib import Path
from typing import Iterable

import numpy as np

from .. import config, kernels
from ..collectives import collective
from ..errors import OutputPathError
from ..run.launch import Backend, check_ranks, mpiexec_backend, run_mpiexec
from ..params import check_params, expand, label, uses_cost_model
from ..problems import (DATATYPES, INTERGROUP_COLLECTIVES, MAX_COUNT, Problem, case_ranks,
                        check_buffer, check_int, check_op, make_problem)
from ..run.runner import STATISTICS, summarize
from ..run.metadata import run_metadata
from .sweep import (MAX_CASES, check_groups_fit, distributions, int_values, parse_groups,
                    parse_names)
from .calibrate import load as load_calibration
from .. import frames
from .verify import RANKS_HINT

__all__ = ["DEFAULT_ROUNDS", "GROUP_FIELDS", "ROW_FIELDS", "ResultWriter", "row_fields", "bench",
           "bench_cases", "calibrated_params", "check_output", "run_cases"]


def check_output(path: str | os.PathLike, what: str = "--out",
                 fields: list[str] | None = None) -> Path:
    """Check, before any work, that rows can be appended to CSV `path`; return it.

    Opens the file for appending (creating it and its folders if needed; a file this
    creates is removed again, so nothing is left behind when the run then fails), which is
    the one reliable test: permissions, read-only file systems, immutable files,
    ``/proc``, folders and paths under a file all fail here, with the system's reason.
    With `fields`, an existing non-empty file must have that CSV header.

    Raises
    ------
    OutputPathError
        A ValueError naming `what`, the path and the reason.
    """
    path = Path(path)
    if str(path) == "" or path.is_dir():
        raise OutputPathError(f"{what} {str(path)!r}: is a directory, not a file")
    existed = path.exists()
    for parent in path.absolute().parents:  # the first existing ancestor must be a folder
        if parent.exists():
            if not parent.is_dir():
                raise OutputPathError(f"{what} {path}: cannot write: {parent} is a file, "
                                      f"not a folder")
            break
    try:
        if not existed:
            path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", newline=""):
            pass
        if not existed:
            path.unlink()
    except OSError as exc:
        raise OutputPathError(f"{what} {path}: cannot write: {exc.strerror or exc}") from None
    if fields is not None and existed and path.stat().st_size > 0:
        _check_header(path, fields)
    return path


def _check_header(path: Path, fields: list[str]) -> list[str]:
    """The columns to append to `path` with: `fields`, or the file's own if it was written
    before the columns :data:`LATER_FIELDS` existed (rows then go without them)."""
    try:
        with open(path, newline="") as f:
            header = next(csv.reader(f), [])
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise OutputPathError(f"{path}: cannot read its header: {exc}") from None
    if header != fields and header != [f for f in fields if f not in LATER_FIELDS]:
        raise OutputPathError(f"{path} exists with other columns; choose another --out file")
    return header

ROW_FIELDS = [
    "collective", "algorithm", "params", "p", "root", "distribution", "b", "m", "m_prime",
    "datatype", "op",
    "reps", "warmup", "rounds", "statistic",
    "min_us", "median_us", "mean_us", "max_us", "ratio_to_native",
    "mpi_library", "mpi4py", "ranks", "hosts", "oversubscribed", "heavy_yield", "backend",
    "platform", "slurm_job", "nodes", "date", "git_commit", "tuwviz",
]
#: Columns added after results files were first written: a file without them is still
#: appended to (its rows lack them; readers treat them as empty).
LATER_FIELDS = ("slurm_job", "nodes")

#: Rounds in which :func:`bench` interleaves the algorithms of a problem by default.
DEFAULT_ROUNDS = 5

#: Columns of two-group rows (intergroup Allgather(v), ``groups=``), after ``p``: the size
#: ``q`` of group B, B's block size ``b_b``, and each group's data as the intergroup
#: paper's ``k_A``, ``k_B`` (Allgather: the groups' block sizes; Allgatherv: the sums
#: ``K_A = sum_i k_A,i`` and ``K_B``), in elements.
GROUP_FIELDS = ["q", "b_b", "k_a", "k_b"]


def row_fields(groups: bool = False) -> list[str]:
    """The CSV columns of bench rows: :data:`ROW_FIELDS`, with :data:`GROUP_FIELDS` after
    ``p`` for two-group rows.

    >>> row_fields(True)[:6]
    ['collective', 'algorithm', 'params', 'p', 'q', 'b_b']
    """
    if not groups:
        return list(ROW_FIELDS)
    i = ROW_FIELDS.index("p") + 1
    return ROW_FIELDS[:i] + GROUP_FIELDS + ROW_FIELDS[i:]


class ResultWriter:
    """Append rows to a CSV file, one flushed line per row, so a crash loses nothing.

    An existing file is appended to if it has the same columns; otherwise an error says
    so instead of mixing two layouts in one file.
    """

    def __init__(self, path: str | os.PathLike, fields: list[str] = ROW_FIELDS):
        self.path = Path(path)
        self.fields = fields
        if self.path.is_dir():
            raise OutputPathError(f"{self.path}: is a directory, not a file")
        if self.path.exists() and self.path.stat().st_size > 0:
            self.fields = fields = _check_header(self.path, fields)
            new = False
        else:
            new = True
        try:
            if new:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a", newline="")
        except OSError as exc:
            raise OutputPathError(f"{self.path}: cannot write: {exc.strerror or exc}") from None
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


def calibrated_params(collective_name: str, algorithm: str, params: dict, ranks: int,
                      cache: dict | None = None, cost: tuple[float, float] | None = None) -> dict:
    """`params` with this machine's calibrated ``alpha``/``beta`` for `ranks` ranks added,
    if the algorithm uses them (:func:`uses_cost_model`) and ``tuwviz calibrate`` has
    cached that layout; else `params`.

    `cache` (a dict) keeps the lookups of one sweep.  `cost` (alpha, beta) is used instead
    of a calibration: a simulated platform's own numbers.
    """
    row = kernels.find_algorithm(collective_name, algorithm)
    if not uses_cost_model((q.name for q in row.params), params):
        return params
    if cost is not None:
        return {**params, "alpha": cost[0], "beta": cost[1]}

    cache = {} if cache is None else cache
    if ranks not in cache:
        cache[ranks] = load_calibration(ranks)
    cal = cache[ranks]
    return params if cal is None else {**params, "alpha": cal.alpha, "beta": cal.beta}


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
    samples: bool = False,
    op: str = "sum",
    max_time: float = 0.0,
    groups=None,
    b_b: Iterable[int] | None = None,
    rounds: int | None = 1,
    calibrated: bool = True,
    statistic: str = "slowest",
    cost: tuple[float, float] | None = None,
) -> list[dict]:
    """Cases of a sweep, ``native`` first within each problem (so ratios can be formed).

    With `rounds` > 1 the algorithms of a problem take turns: its `reps` are split into
    `rounds` rounds and each round runs every algorithm once, in the same order (ReproMPI's
    shuffled measurements, per round), so a burst of load on the machine hits all of them
    instead of skewing one.  Each round is a case with ``part = [round, rounds]``;
    :func:`run_cases` joins the parts into one row.  The first round has the `warmup`
    calls, later ones one each.  A run that fails keeps the rows of the problems whose
    rounds all finished; the error's ``case`` counts rounds, not rows.  None:
    :data:`DEFAULT_ROUNDS`, at most `reps`.

    With `groups` (``[(p, q), ...]`` or ``"6,2"``), two groups on an inter-communicator
    instead of `ps` (Allgather, Allgatherv): group B's average block sizes are `b_b`
    (default: the same as A's, each b of `bs`).

    The defaults of `reps` and `warmup` are the gatherv paper's (75 and 10, Section 5).
    `params` is a grid of tuning parameters, e.g. ``{"block_bytes": [0, 4096]}``; each
    algorithm runs once per combination of the values it takes (:func:`tuwviz.params.expand`).
    With `samples`, each result also has ``samples_us``: every repetition's time.  `op` is
    the reductions' operator (:data:`tuwviz.problems.OPS`; the circulant paper measures
    ``bor`` on ``byte``).  `max_time` ends a measurement's repetitions after that many
    seconds, keeping those done (ReproMPI's time limit; the row's ``reps`` says how many
    ran), where `time_limit` makes exceeding it an error.  With `calibrated`, algorithms
    whose defaults come from the cost model (the pipelined ring's Eq. (2) block size) get
    this machine's calibrated ``alpha``/``beta`` for their ranks, if cached
    (:func:`calibrated_params`), or `cost` (alpha, beta) if given (a simulated platform's);
    the rows' ``params`` show them.  `statistic` is how repetitions become a row
    (:func:`tuwviz.run.runner.summarize`): ``slowest`` or ``osu``.
    """
    info = collective(collective_name)
    coll = info.name
    algorithms = parse_names(algorithms)  # a single string is one name, not letters
    if not algorithms:
        raise ValueError("empty selection: no algorithm to measure")
    for a in algorithms:
        kernels.find_algorithm(coll, a)  # unknown names fail before anything starts
    if groups is not None:
        groups = parse_groups(groups)
        if coll not in INTERGROUP_COLLECTIVES:
            raise ValueError(f"two groups (--groups) are for {', '.join(INTERGROUP_COLLECTIVES)} "
                             f"on an inter-communicator, not {coll}")
        ps = [p for p, _ in groups]
    elif b_b is not None:
        raise ValueError("B's block sizes (--b-b) need two groups (--groups P,Q)")
    for a in algorithms:
        kernels.find_algorithm(coll, a).check_comm(groups is not None)
    ps = int_values("ps", ps, lo=1)
    bs = int_values("bs", bs, lo=0, hi=MAX_COUNT)
    if b_b is not None:
        b_b = int_values("b_b", b_b, lo=0, hi=MAX_COUNT)
    dists = distributions(parse_names(dists), coll)
    if not dists:
        raise ValueError("empty selection: no distribution given")
    if root is not None:
        if not info.rooted:
            raise ValueError(f"{coll} has no root; leave out root (--root)")
        root = check_int("root", root, lo=0)
        if root >= min(ps):
            raise ValueError(f"root {root} out of range 0..{min(ps) - 1} for p={min(ps)}")
    seed = check_int("seed", seed, lo=0)
    reps = check_int("reps", reps, lo=1)
    warmup = check_int("warmup", warmup, lo=0)
    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic {statistic!r}; valid statistics: "
                         f"{', '.join(STATISTICS)}")
    rounds = min(DEFAULT_ROUNDS, reps) if rounds is None else check_int("rounds", rounds, lo=1)
    if rounds > reps:
        raise ValueError(f"rounds ({rounds}) cannot exceed reps ({reps}): each round times "
                         f"every algorithm at least once")
    time_limit = _time_limit(time_limit)
    max_time = _time_limit(max_time)
    if time_limit and max_time:
        raise ValueError("give a time limit (an error when exceeded) or a maximum time "
                         "(repetitions end), not both")
    if datatype not in DATATYPES:
        raise ValueError(f"unknown datatype {datatype!r}; valid datatypes: {', '.join(DATATYPES)}")
    if info.reduction:
        check_op(datatype, op)
        for a in algorithms:
            kernels.find_algorithm(coll, a).check_problem(min(ps), op)
    taken = {q.name for a in algorithms for q in kernels.find_algorithm(coll, a).params}
    unused = [k for k, v in (params or {}).items() if k not in taken]
    if unused:  # silently measuring without it would mislabel the sweep
        raise ValueError(f"none of {coll} {', '.join(algorithms)} takes the parameter "
                         f"{unused[0]}")
    order = sorted(algorithms, key=lambda a: a != "native")
    cases = []
    looked_up: dict = {}  # calibrations by ranks
    shapes = [(p, None) for p in ps] if groups is None else groups
    for p, q in shapes:
        for dist in dists:
            for b, bb in ((b, bb) for b in bs for bb in (b_b or [b] if q else [None])):
                pr = make_problem(coll, p, dist, b, root=root, seed=seed, datatype=datatype,
                                  op=op if info.reduction else "sum", q=q, b_b=bb)
                check_buffer(pr)
                runs = [(alg, check_params(coll, alg, prm, p))
                        for alg in order for prm in expand(coll, alg, params)]
                if calibrated:
                    runs = [(alg, calibrated_params(coll, alg, prm, pr.size, looked_up, cost))
                            for alg, prm in runs]
                if len(cases) + rounds * len(runs) > MAX_CASES:
                    raise ValueError(f"more than {MAX_CASES:,} cases: choose fewer p, b, "
                                     f"distributions, algorithms or rounds "
                                     f"(tuwviz.experiments.sweep.MAX_CASES)")
                for r in range(rounds):
                    for alg, prm in runs:
                        case = {"mode": "measure", "problem": pr.to_dict(), "algorithm": alg,
                                "reps": reps // rounds + (r < reps % rounds),
                                "warmup": warmup if r == 0 else min(warmup, 1),
                                # limits are for a whole measurement: each round runs with
                                # its share (tuwviz.run.runner)
                                "time_limit": time_limit, "data_seed": seed,
                                **({"max_time": max_time} if max_time else {}),
                                "params": prm, **({"samples": True} if samples else {}),
                                **({"statistic": statistic} if statistic != "slowest" else {})}
                        if rounds > 1:
                            case.update(part=[r, rounds], samples=True, keep_samples=samples)
                        cases.append(case)
    return cases


def _joined(case: dict, result: dict, parts: dict) -> dict | None:
    """The result of a measurement whose rounds are all done (None until then): every
    round's repetitions together, the first round's warm-up."""
    r, n = case["part"]
    key = json.dumps([case["problem"], case["algorithm"], case["params"]], sort_keys=True)
    acc = parts.setdefault(key, {"warmup": result["warmup"], "us": [], "ranks": []})
    acc["us"].extend(result["samples_us"])
    if "rank_samples_us" in result:  # OSU's statistic: every rank's times
        acc["ranks"].append(np.asarray(result["rank_samples_us"]))
    if r < n - 1:
        return None
    del parts[key]
    us = np.asarray(acc["us"])
    statistic = case.get("statistic", "slowest")
    joined = {"reps": len(us), "warmup": acc["warmup"], "rounds": n,
              **summarize(np.concatenate(acc["ranks"], axis=1) if statistic == "osu" else us,
                          statistic)}
    if case.get("keep_samples"):
        joined["samples_us"] = us.tolist()
    return joined


def _time_limit(value) -> float:
    import math

    try:
        t = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"time limit must be a number of seconds, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(t) or t < 0:
        raise ValueError(f"time limit must be a finite number of seconds >= 0 (0: none), "
                         f"got {value!r}")
    return t


def _row(case: dict, result: dict, meta: dict, native_median: dict) -> dict:
    pr = case["problem"]
    key = (pr["collective"], pr["p"], pr.get("q"), pr["root"], pr["distribution"], pr["b"],
           pr.get("b_b"))
    if case["algorithm"] == "native":
        native_median[key] = result["median_us"]
    base = native_median.get(key)
    counts = pr["counts"]
    problem = Problem.from_dict(pr)
    row = {
        "collective": pr["collective"], "algorithm": case["algorithm"],
        "params": label(case.get("params")), "p": pr["p"],
        "root": pr["root"], "distribution": pr["distribution"], "b": pr["b"],
        "m": sum(counts), "m_prime": problem.m_prime, "datatype": pr["datatype"],
        "op": pr.get("op", "sum"),
        **result,
        "ratio_to_native": result["median_us"] / base if base else "",
        **meta,
    }
    if problem.inter:  # two groups: each group's block (Allgather) or sum (Allgatherv)
        a, b = problem.group_counts(0), problem.group_counts(1)
        v = collective(pr["collective"]).irregular
        row.update(q=problem.q, b_b=problem.b_b, k_a=sum(a) if v else a[0],
                   k_b=sum(b) if v else b[0])
    return row


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
    op: str = "sum",
    params: dict[str, list] | None = None,
    backend: Backend | None = None,
    backend_name: str | None = None,
    progress: bool = True,
    stall_limit: float | None = None,
    samples: bool = False,
    max_time: float = 0.0,
    groups=None,
    b_b: Iterable[int] | None = None,
    rounds: int | None = None,
    calibrated: bool = True,
    statistic: str = "slowest",
):
    """Measure algorithms of one collective side by side; return a pandas DataFrame.

    Parameters
    ----------
    collective_name : str
        The collective (``"gatherv"``).
    algorithms : str or iterable of str
        Registered algorithm names; ``native`` is the MPI library's collective.  A string
        is one name (or ``"a,b"``).
    ps, dists, bs : iterables
        Process counts, block-size distributions and average block sizes ``b`` to sweep.
    datatype : str
        Element type (``"int"``; ``"byte"`` makes ``b`` a size in bytes).
    op : str
        The reductions' operator (``"sum"``; ``"bor"`` with ``"byte"`` as the circulant
        paper measures); ignored by the other collectives.
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
    max_time : float
        Seconds after which a measurement's repetitions end, keeping those done (0: run
        all `reps`); ReproMPI's limit, e.g. ``reps=5000, max_time=3`` as the circulant
        paper.  Not together with `time_limit`.
    backend : callable, optional
        Where to run (default: fresh ranks under mpiexec, one run per p, so no idle
        ranks share the cores with a measurement).
    progress : bool
        Show a progress bar.
    stall_limit : float, optional
        Seconds without progress after which an mpiexec run is stopped as hung, naming
        the ranks that stopped responding (default :data:`tuwviz.run.launch.STALL_LIMIT`).
    samples : bool
        Also return every repetition's time (slowest rank), as a list per row in a
        ``samples_us`` column (not written to `out`), e.g. for box plots.
    groups : str or iterable, optional
        Two groups instead of `ps`: ``"6,2"`` or ``[(6, 2), (5, 3)]`` runs Allgather or
        Allgatherv on inter-communicators of group A (p) and B (q); rows then have the
        columns :data:`GROUP_FIELDS` too (:func:`row_fields`).
    b_b : iterable of int, optional
        Group B's average block sizes (default: A's, each b of `bs`), e.g. ``[b / 4]`` for
        the intergroup paper's setting 3 (``k_A = 4 k_B``).
    rounds : int, optional
        The algorithms of a problem take turns in this many rounds, each round timing
        every one of them for its share of `reps` (:func:`bench_cases`), so load on the
        machine hits them alike; 1 times each algorithm's repetitions in one block.
        Default: :data:`DEFAULT_ROUNDS`, at most `reps`.  Rows say it (``rounds``).
    calibrated : bool
        Give algorithms whose defaults come from the cost model (the pipelined ring's
        block size, Eq. (2)) this machine's ``alpha``/``beta`` from ``tuwviz calibrate``
        for their number of ranks, when cached and not set in `params` (on a simulated
        platform, :class:`tuwviz.run.smpi.SmpiBackend`, the platform's inter-node ones);
        False: the C defaults (1 µs, 1 ns/B).  The rows' ``params`` show the values used.
    statistic : str
        How the repetitions become a row's min/median/mean/max (``statistic`` column):
        ``slowest`` (default) takes each repetition's slowest rank, then statistics over
        the repetitions (the gatherv paper's and ReproMPI's way); ``osu`` averages each
        rank over its repetitions, then statistics over the ranks, so ``mean_us`` is OSU
        Micro-Benchmarks' "Avg Latency" (:func:`tuwviz.run.runner.summarize`).

    Returns
    -------
    FullFrame
        One row per measurement, columns :data:`ROW_FIELDS`: a pandas DataFrame that
        shows its cells in full (:class:`tuwviz.frames.FullFrame`; ``params`` are long).

    Raises
    ------
    ValueError
        Before anything is measured or written: unknown names, an empty selection, p
        outside ``1..`` :func:`tuwviz.config.max_ranks`, non-integer or negative sizes, a root for a collective
        without one, bad reps/warm-up/time limit, or an `out` that cannot be written
        (:class:`~tuwviz.errors.OutputPathError`).
    """
    plat = getattr(backend, "platform", None)  # simulated: the platform's own alpha, beta
    cost = plat.cost if plat is not None else None
    if backend is None:  # before building cases: range(1, 10**7) fails at once
        sizes = ([p + q for p, q in check_groups_fit(groups)] if groups is not None
                 else int_values("ps", ps, lo=1, hi=config.max_ranks(), hint=RANKS_HINT))
        for p in sizes:
            check_ranks(p)
        backend = mpiexec_backend(stall_limit)
        backend_name = backend_name or "mpiexec"
    cases = bench_cases(collective_name, algorithms, ps, dists, bs, root, seed, reps, warmup,
                        time_limit, datatype, params, samples, op, max_time, groups, b_b,
                        rounds, calibrated, statistic, cost)
    return run_cases(cases, out=out, backend=backend, backend_name=backend_name,
                     progress=progress, samples=samples, desc=f"bench {collective_name}")


def run_cases(cases: list[dict], *, out: str | os.PathLike | None = None,
              backend: Backend | None = None, backend_name: str | None = None,
              progress: bool = True, samples: bool = False, desc: str = "bench"):
    """Measure `cases` (from :func:`bench_cases`, of one or more collectives), one run per
    p, each row appended to `out` as it comes; return the rows as :func:`bench` does."""
    from tqdm.auto import tqdm

    if not cases:
        raise ValueError("empty selection: nothing to measure")
    fields = row_fields(any(c["problem"].get("q") for c in cases))
    if out is not None:
        check_output(out, fields=fields)
    rows: list[dict] = []
    writer = ResultWriter(out, fields) if out is not None else None
    bar = tqdm(total=len(cases), desc=desc, disable=not progress, unit="run", mininterval=0.5)
    native_median: dict = {}
    meta: dict = {}
    parts: dict = {}  # rounds of interleaved measurements so far
    name = backend_name or getattr(backend, "columns", {}).get("backend") or (
        "mpiexec" if backend is None else "custom")

    def on_start(rank_infos):
        meta.clear()
        meta.update(run_metadata(rank_infos, name))

    def on_result(i, case, result):
        bar.update()
        if "part" in case:
            result = _joined(case, result, parts)
            if result is None:  # more rounds to come
                return
        row = _row(case, {"rounds": 1, "statistic": case.get("statistic", "slowest"), **result},
                   meta, native_median)
        rows.append(row)
        if writer:
            writer.write(row)
        bar.set_postfix_str(f"p={row['p']} {row['collective']} {row['distribution']} "
                            f"b={row['b']} {row['algorithm']} {row['params']}".rstrip())

    try:
        # one run per number of ranks: no idle ranks share the cores with a measurement
        for n in sorted({case_ranks(c["problem"]) for c in cases}):
            chunk = [c for c in cases if case_ranks(c["problem"]) == n]
            (backend or run_mpiexec)(n, chunk, on_result, on_start=on_start)
    finally:
        bar.close()
        if writer:
            writer.close()
    return frames.FullFrame(rows, columns=fields + (["samples_us"] if samples else []))
