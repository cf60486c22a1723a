"""The intergroup paper's cost formulas and experimental settings, as functions.

Paper: Kang, Träff, Al-Bahrani, Agrawal, Choudhary, Liao, "Scalable algorithms for MPI
intergroup Allgather and Allgatherv", Parallel Computing 2019.  Every bound here is a
*transfer* term: bytes that must pass one port one after another, so multiply by beta
(the paper's t_w, per byte) for time; the start-up terms (t_s) are left out, as in the
paper's comparisons.  A is the larger group (p processes, blocks k_A or k_{A,i}, sum K_A),
B the other (q, k_B, K_B), as :func:`tuwviz.model.intergroup.groups_ab` picks them.

* :func:`lower_bound`: M = max(K_A, K_B): every process of B must receive all of A's data
  through its one port, and vice versa (Section 2);
* :func:`theorem_1`: Algorithm 1 takes at most M + k_B when q divides p and p/q divides
  k_B (the theorem's assumptions); :func:`algorithm_1_bound` is the indivisible case done
  "using the largest send size" (Section 4): ceil(p/q) exchange rounds, then Allgathers
  as if every process held the largest run or segment;
* :func:`theorem_3`: Algorithm 2's bound max(K_A + max k_A, K_B + max k_B) + log(pq), and
  :func:`algorithm_2_bound`, which also holds for tuwviz's schedule (see there);
* :func:`eq_1`: the best root gathering (binomial gathers, one exchange, optimal
  broadcasts): max((p-1) k_A, (q-1) k_B) + 2 M, about 3 M (Section 3.1);
* :func:`eq_2`: the libraries' root gathering with the broadcast that is twice the data:
  max((p-1) k_A, (q-1) k_B) + 3 p k_A + 3 q k_B (Section 3.1);
* :func:`eq_5`: the expected improvement (M + 3 K_A + 3 K_B) / M (Section 5), which for
  the paper's eight settings (:data:`SETTINGS`, :func:`setting_problem`) gives 7.0, 4.84,
  4.21, 6.68, 7.0, 7.0, 4.84, 4.84;
* :func:`improvement`: the same ratio T_old / T_new from simulated model schedules, and
  :func:`improvement_curve`, Figure 6's curves (labelled as model).

Examples
--------
>>> pr = setting_problem(2, 64, 1000)            # p/q = 25/7 (50 and 14), equal blocks
>>> round(eq_5(pr), 2), lower_bound(pr) == 50 * 1000 * 4
(4.84, True)
>>> [round(eq_5(setting_problem(s, 256, 100)), 2) for s in SETTINGS]
[7.0, 4.84, 4.21, 6.68, 7.0, 7.0, 4.84, 4.84]
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..problems import Problem, make_problem
from .intergroup import groups_ab
from . import schedule, simulate
from .. import frames

__all__ = [
    "SETTINGS",
    "Setting",
    "algorithm_1_bound",
    "algorithm_2_bound",
    "bounds",
    "eq_1",
    "eq_2",
    "eq_5",
    "improvement",
    "improvement_curve",
    "lower_bound",
    "setting_problem",
    "settings_table",
    "theorem_1",
    "theorem_3",
]


@dataclass(frozen=True)
class _Groups:
    """A two-group problem seen as the paper sees it (element counts)."""

    p: int
    q: int
    a: tuple[int, ...]  # A's blocks
    b: tuple[int, ...]  # B's blocks
    item: int

    @property
    def K_A(self) -> int:
        return sum(self.a)

    @property
    def K_B(self) -> int:
        return sum(self.b)


def _groups(problem: Problem) -> _Groups:
    if not problem.inter:
        raise ValueError(f"{problem.label()} is one group; the intergroup bounds need two "
                         f"(make_problem(..., q=Q))")
    a, b = groups_ab(problem)
    counts = problem.block_counts()
    return _Groups(len(a), len(b), tuple(counts[r] for r in a), tuple(counts[r] for r in b),
                   problem.itemsize)


def lower_bound(problem: Problem) -> int:
    """M = max(K_A, K_B) in bytes: the single-port lower bound of any algorithm.

    >>> lower_bound(make_problem("allgather", 6, "regular", 10, q=2, b_b=40, datatype="byte"))
    80
    """
    g = _groups(problem)
    return max(g.K_A, g.K_B) * g.item


def theorem_1(problem: Problem) -> int:
    """Theorem 1: Algorithm 1 transfers at most M + k_B (bytes).

    The proof takes p/q rounds of k_A or k_B q/p each, then Allgathers of equal blocks: it
    assumes q divides p and p/q divides k_B.  Otherwise use :func:`algorithm_1_bound`.

    >>> theorem_1(make_problem("allgather", 6, "regular", 10, q=2, b_b=30, datatype="byte"))
    90
    """
    g = _groups(problem)
    _regular(problem, g)
    return (max(g.K_A, g.K_B) + g.b[0]) * g.item


def algorithm_1_bound(problem: Problem) -> int:
    """Algorithm 1 in general (Section 4, "using the largest send size"), in bytes.

    A is cut into q subgroups of ceil(p/q) or floor(p/q) processes; b_j's block into
    segments of at most s = ceil(k_B / floor(p/q)).  The exchange takes ceil(p/q) rounds of
    at most max(k_A, s); the Allgathers then cost at most (p - 1) s in A and
    (q - 1) ceil(p/q) k_A in B, as if every process held the largest segment or run.  With
    q dividing p and p/q dividing k_B this is at most Theorem 1's M + k_B.

    >>> pr = make_problem("allgather", 50, "regular", 10, q=14, datatype="byte")
    >>> algorithm_1_bound(pr), theorem_1(pr)      # 4 rounds, runs of 4 blocks: 4 x 14 x 10
    (560, 510)
    """
    g = _groups(problem)
    _regular(problem, g)
    k_a, k_b = g.a[0], g.b[0]
    rounds, least = -(-g.p // g.q), g.p // g.q
    seg = -(-k_b // least)
    return (rounds * max(k_a, seg) + max((g.p - 1) * seg, (g.q - 1) * rounds * k_a)) * g.item


def theorem_3(problem: Problem) -> float:
    """Theorem 3 (Eq. (4)): Algorithm 2 transfers at most
    max(K_A + max k_A, K_B + max k_B) + log2(p q) elements, here in bytes.

    The proof lets each group's Allgather run while the other group still exchanges; in
    the one-ported model a process's Allgather starts only once its own sends have left,
    which :func:`algorithm_2_bound` accounts for.

    >>> theorem_3(make_problem("allgatherv", 4, "arithmetic", 10, q=4, datatype="byte"))
    94.0
    """
    g = _groups(problem)
    return (max(g.K_A + max(g.a), g.K_B + max(g.b)) + math.log2(g.p * g.q)) * g.item


def algorithm_2_bound(problem: Problem) -> int:
    """A transfer bound of tuwviz's Algorithm 2 schedule, in bytes.

    C + max(ceil(K_A/q) + max k_A, ceil(K_B/p) + max k_B) + max(K_A + q, K_B + p) (the last
    two in elements): the counts' sums, C = 16 max(ceil(log2 p), ceil(log2 q)) bytes (8-byte
    messages, recursive doubling and a broadcast); the exchange, a receiver's part plus a
    late multi-target sender's block (Theorem 3's argument); the circulant Allgatherv of
    parts of ceil(K/n) elements.  It exceeds Theorem 3 by about one part, ceil(K_A/q),
    which matters only when q is small.

    >>> algorithm_2_bound(make_problem("allgatherv", 4, "arithmetic", 10, q=4, datatype="byte"))
    141
    """
    g = _groups(problem)
    counts = 16 * max(_clog2(g.p), _clog2(g.q))
    exchange = max(-(-g.K_A // g.q) + max(g.a), -(-g.K_B // g.p) + max(g.b))
    return counts + (exchange + max(g.K_A + g.q, g.K_B + g.p)) * g.item


def eq_1(problem: Problem) -> int:
    """The best root gathering's transfer term (Eq. (1), first line), in bytes.

    The gathers at the two roots (max((p-1) k_A, (q-1) k_B) with optimal binomial trees),
    the roots' exchange (M) and optimal broadcasts in both groups (M): about 3 M as p and
    q grow, "a factor three larger than the lower bound".  Allgatherv: the same with the
    groups' sums (the gather of all but the root's block).

    >>> pr = make_problem("allgather", 8, "regular", 10, q=8, datatype="byte")
    >>> eq_1(pr), lower_bound(pr)          # 70 + 2 x 80
    (230, 80)
    """
    g = _groups(problem)
    gather = max(g.K_A - g.a[0], g.K_B - g.b[0])
    return (gather + 2 * max(g.K_A, g.K_B)) * g.item


def eq_2(problem: Problem) -> int:
    """The libraries' root gathering (Eq. (2), transfer term), in bytes.

    Allgather: gather at each root (max((p-1) k_A, (q-1) k_B)), then one after the other
    the roots' exchanges (p k_A + q k_B) and the broadcasts that send twice the data
    (2 p k_A + 2 q k_B).  Allgatherv, as MPICH does it: every process sends its block to
    the other group's root, so the gather is the exchange, 3 K_A + 3 K_B.  tuwviz's
    root gathering stays below this when its broadcasts scatter and ring (12,288 bytes or
    more to 8 or more processes); the binomial broadcast of short messages costs more.

    >>> eq_2(make_problem("allgather", 8, "regular", 10, q=4, datatype="byte"))
    430
    """
    g = _groups(problem)
    gather = max(g.K_A - g.a[0], g.K_B - g.b[0]) if problem.collective == "allgather" else 0
    return (gather + 3 * g.K_A + 3 * g.K_B) * g.item


def eq_5(problem: Problem) -> float:
    """Eq. (5): the expected improvement (M + 3 K_A + 3 K_B) / M of Algorithm 1 or 2 over
    root gathering, the paper's formula for both collectives (nan when M = 0).

    >>> eq_5(make_problem("allgather", 8, "regular", 10, q=8))
    7.0
    """
    g = _groups(problem)
    m = max(g.K_A, g.K_B)
    return (m + 3 * g.K_A + 3 * g.K_B) / m if m else math.nan


@dataclass(frozen=True)
class Setting:
    """One of the paper's parameter settings (Section 5)."""

    collective: str
    equal_groups: bool     # p = q, else p/q = 25/7
    distribution: str      # "regular" or "arithmetic"
    k_a: int               # block-size multipliers: k_A = k_a b, k_B = k_b b
    k_b: int
    text: str


#: The paper's settings 1-8 (Section 5): 1-4 Allgather, 5-8 Allgatherv.
SETTINGS: dict[int, Setting] = {
    1: Setting("allgather", True, "regular", 1, 1, "p = q, equal blocks"),
    2: Setting("allgather", False, "regular", 1, 1, "p/q = 25/7, equal blocks"),
    3: Setting("allgather", False, "regular", 4, 1, "p/q = 25/7, k_A = 4 k_B"),
    4: Setting("allgather", False, "regular", 1, 4, "p/q = 25/7, k_B = 4 k_A"),
    5: Setting("allgatherv", True, "regular", 1, 1, "p = q, equal blocks"),
    6: Setting("allgatherv", True, "arithmetic", 1, 1, "p = q, rank i sends b i"),
    7: Setting("allgatherv", False, "regular", 1, 1, "p/q = 25/7, equal blocks"),
    8: Setting("allgatherv", False, "arithmetic", 1, 1,
               "p/q = 25/7, a_i sends b (q-1) i, b_j sends b (p-1) j (equal means)"),
}


def setting_problem(number: int, n: int, b: int, datatype: str = "int",
                    groups: tuple[int, int] | None = None) -> Problem:
    """The paper's setting `number` on `n` processes with block size `b` (elements).

    p = q = n/2, or p = 25 n/32 and q = 7 n/32 (64 processes: 50 and 14; 256: 200 and 56;
    2,048: 1,600 and 448).  Setting 8 needs equal mean blocks in the two groups for the
    paper's 4.84 (with the same step in both, Eq. (5) gives 4 + 3 q(q-1) / (p(p-1)), about
    4.22): a_i sends b (q-1) i, b_j sends b (p-1) j.  `groups` = (p, q) scales a setting
    down to other group sizes (`n` is then ignored), e.g. (7, 2) for 25/7.

    >>> pr = setting_problem(8, 64, 2)
    >>> (pr.p, pr.q), pr.counts[:3], pr.counts[50:53]
    ((50, 14), (0, 26, 52), (0, 98, 196))
    >>> setting_problem(4, 0, 3, groups=(7, 2)).counts[6:]
    (3, 12, 12)

    Raises
    ------
    ValueError
        For an unknown setting, or `n` that the setting's ratio does not divide.
    """
    if number not in SETTINGS:
        raise ValueError(f"no setting {number}; the paper's settings are "
                         f"{', '.join(map(str, SETTINGS))}")
    s = SETTINGS[number]
    parts = 2 if s.equal_groups else 32
    if groups is not None:
        p, q = groups
    elif n < parts or n % parts:
        raise ValueError(f"setting {number} ({s.text}) needs n divisible by {parts}, got {n}")
    else:
        p, q = (n // 2, n // 2) if s.equal_groups else (25 * n // 32, 7 * n // 32)
    b_a, b_b = s.k_a * b, s.k_b * b
    if number == 8:
        b_a, b_b = b * (q - 1), b * (p - 1)
    return make_problem(s.collective, p, s.distribution, b_a, q=q, b_b=b_b, datatype=datatype)


def improvement(problem: Problem, alpha: float = 0.0, beta: float = 1e-9,
                new: str = "segmented") -> float:
    """T_old / T_new: root gathering's simulated time over algorithm `new`'s (model).

    With ``alpha = 0`` (the default) the ratio is that of the transfer terms, the limit of
    Figure 6's curves as the message size grows.

    >>> round(improvement(setting_problem(1, 64, 4096)), 2)
    6.84
    """
    old = simulate(schedule(problem.collective, "root_gathering", problem), alpha, beta).time
    t = simulate(schedule(problem.collective, new, problem), alpha, beta).time
    return old / t if t else math.nan


def improvement_curve(settings, n: int, sizes, alpha: float = 1.4e-6,
                      beta: float = 1.0e-9) -> list[dict]:
    """Figure 6's curves from the model: T_old / T_new per setting and message size.

    Parameters
    ----------
    settings : iterable of int
        Setting numbers (:data:`SETTINGS`).
    n : int
        Processes in both groups (64, 256 or 2,048 in the paper).
    sizes : iterable of int
        Largest message per process in bytes (the paper: 64 KiB to 8 MiB per node); the
        block size b is chosen so that A's largest block has about this many bytes.
    alpha, beta : float, optional
        Seconds per message and per byte (defaults: about a 2019 cluster network,
        1.4 us and 1 GB/s).

    Returns
    -------
    list of dict
        ``setting``, ``n``, ``bytes``, ``improvement``, ``eq_5`` and ``source`` (``"model"``).

    >>> rows = improvement_curve([1], 64, [1 << 16, 1 << 20])
    >>> [round(r["improvement"], 2) for r in rows], rows[0]["eq_5"], rows[0]["source"]
    ([6.87, 6.85], 7.0, 'model')
    """
    rows = []
    for s in settings:
        for size in sizes:
            pr = _problem_of_size(s, n, int(size))
            rows.append({"setting": s, "n": n, "bytes": int(size),
                         "improvement": improvement(pr, alpha, beta), "eq_5": round(eq_5(pr), 2),
                         "source": "model"})
    return rows


def settings_table(ns=(64, 256), b: int = 16384, b_small: int = 64):
    """The paper's eight settings side by side: Eq. (5)'s improvement and the model's
    T_old / T_new (transfer terms: alpha = 0) with n processes in both groups.

    `b` is the block size, `b_small` that of settings 6 and 8 (their blocks grow with
    the rank: b (q-1) i elements); Eq. (5) is taken at n = 64, b = 1000 (it does not
    depend on the scale).

    Returns
    -------
    FullFrame
        ``setting``, ``what`` (the paper's description, whole), ``Eq. (5)`` and one
        ``model, n processes`` column per n, rounded to 2 decimals.

    >>> t = settings_table(ns=[64])
    >>> int(t.loc[0, "setting"]), float(t.loc[0, "Eq. (5)"]), list(t.columns)[-1]
    (1, 7.0, 'model, 64 processes')
    """
    rows = []
    for s, setting in SETTINGS.items():
        row = {"setting": s, "what": setting.text,
               "Eq. (5)": round(eq_5(setting_problem(s, 64, 1000)), 2)}
        for n in ns:
            pr = setting_problem(s, n, b_small if s in (6, 8) else b)
            row[f"model, {n} processes"] = round(improvement(pr, alpha=0.0, beta=1.0), 2)
        rows.append(row)
    return frames.FullFrame(rows)


def _problem_of_size(setting: int, n: int, size: int, datatype: str = "int") -> Problem:
    """setting_problem with A's largest block about `size` bytes."""
    probe = setting_problem(setting, n, 1, datatype)
    largest = max(probe.group_counts(0)) * probe.itemsize  # bytes per unit of b
    return setting_problem(setting, n, max(1, round(size / max(largest, 1))), datatype)


def _regular(problem: Problem, g: _Groups) -> None:
    if problem.collective != "allgather" or len(set(g.a)) > 1 or len(set(g.b)) > 1:
        raise ValueError("Theorem 1 is about Allgather: equal blocks in each group")


def _clog2(n: int) -> int:
    return (n - 1).bit_length()


def bounds(problem: Problem) -> dict[str, float]:
    """The paper's transfer terms for `problem`, in bytes, named as ``tuwviz model
    --groups`` prints them: the lower bound, Eq. (2), Theorem 1 and Algorithm 1's bound
    (Allgather), Theorem 3 and Algorithm 2's bound (Allgatherv), Eq. (5)'s improvement.

    Examples
    --------
    >>> from tuwviz.problems import make_problem
    >>> for name, value in bounds(make_problem("allgather", 6, b=100, q=2)).items():
    ...     print(f"{name}: {value}")
    lower bound M: 2400
    Eq. (2) root gathering: 11600
    Theorem 1: M + k_B: 2800
    Algorithm 1 bound: 2400
    Theorem 3 (Algorithm 2): 2814.34
    Eq. (5) improvement: 5.0
    """
    out = {"lower bound M": lower_bound(problem), "Eq. (2) root gathering": eq_2(problem)}
    if problem.collective == "allgather":
        out["Theorem 1: M + k_B"] = theorem_1(problem)
        out["Algorithm 1 bound"] = algorithm_1_bound(problem)
    out["Theorem 3 (Algorithm 2)"] = round(theorem_3(problem), 2)
    if problem.collective == "allgatherv":
        out["Algorithm 2 bound"] = algorithm_2_bound(problem)
    out["Eq. (5) improvement"] = round(eq_5(problem), 3)
    return out
