"""Problem instances: who contributes how much to a collective.

A :class:`Problem` fixes the collective, the number of processes ``p``, the root and the
block size ``m_i`` (in elements of ``datatype``) of every process.  Block sizes come from
named distributions defined exactly as in the papers.

The gatherv paper (Träff 2017, Section 5) uses an average block size ``b`` and

* **same**: ``m_i = b``;
* **random**: ``m_i`` uniform in ``[1, 2b]``;
* **spikes**: ``m_i = rho*b`` with probability ``1/rho``, else 1 (``rho = 5``);
* **decreasing**: ``m_i = floor(2b(p-i)/p) + 1``;
* **alternating**: ``m_i = b + floor(b/2)`` for even ``i``, ``b - floor(b/2)`` for odd ``i``;
* **two_blocks**: all ``m_i = 0`` except ``m_0 = m_{p-1} = b``.

Its tables report ``m = sum_i m_i`` and the padded total ``m' = p * max_i m_i``.

The intergroup paper (Kang, Träff et al. 2019, Section 5) adds, per group,

* **arithmetic** (settings 6 and 8): ``m_i = b i``;
* **qiaok** (its evaluation code): ``m_i = 2 (i + 1) ceil(b / p)``.

The allgatherv paper (Träff et al. 2010, Section 3) uses a base count ``c`` (passed as
``b``) and

* **regular** (1): ``m_i = c``, so ``m = pc``;
* **broadcast** (2): ``m_0 = c``, all other ``m_i = 0``, so ``m = c``;
* **spike** (3): ``m_0 ~ c/2`` and ``m_i = floor(c / (2(p-1)))`` for ``i > 0``; ``m_0`` takes
  the rounding remainder so that ``m = c`` exactly;
* **half_full** (4): ``m_i = 2c`` for even ``i``, 0 for odd ``i``;
* **linear_decreasing** (5): ``m_i = floor(2c (p-1-i) / (p-1))`` (``c`` for ``p = 1``);
* **geometric** (6): ``m_{i-1+j} = floor(c p / (i log2 p))`` for ``i = 1, 2, 4, ...`` and
  ``j = 0 .. i-1`` (``c`` for ``p = 1``), so ``m ~ pc`` when ``p`` is a power of two.

:data:`PAPER_DISTRIBUTIONS` says which paper each distribution comes from; sweeps use a
collective's own paper's distributions by default (:func:`default_distributions`).

Examples
--------
>>> pr = make_problem("gatherv", p=560, distribution="decreasing", b=1)
>>> pr.m, pr.m_prime, pr.root
(842, 1680, 280)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import config
from .collectives import collective as collective_info

__all__ = [
    "COMMUTATIVE_OPS",
    "DATATYPES",
    "DISTRIBUTIONS",
    "FILL",
    "MAX_COUNT",
    "OPS",
    "OP_DATATYPES",
    "DATA_KINDS",
    "RANDOM_SUM_TOLERANCE",
    "REDUCTION_TYPES",
    "case_ranks",
    "check_op",
    "default_op",
    "order_free",
    "parse_reduction_types",
    "check_buffer",
    "check_int",
    "Problem",
    "distribution_counts",
    "PAPER_DISTRIBUTIONS",
    "default_distributions",
    "make_problem",
    "normalize_distribution",
    "INTERGROUP_COLLECTIVES",
]

#: Collectives tuwviz runs on two groups (an inter-communicator).
INTERGROUP_COLLECTIVES: tuple[str, ...] = ("allgather", "allgatherv")

#: Element types a problem can use, with their size in bytes.  The C side maps the same
#: names to MPI datatypes (``tuw_datatype`` in ``kernels_c/common/invoke.c``).
DATATYPES: dict[str, int] = {"byte": 1, "int": 4, "double": 8}

#: Reduction operators known to the kernels, in the order of the C codes (``TUW_OP_*`` in
#: ``kernels_c/include/tuwviz.h``): MPI's built-ins ``MPI_SUM``, ``MPI_MAX``, ``MPI_MIN``,
#: ``MPI_BOR`` (the uniform reduce-scatter paper measures ``MPI_BOR`` on ``MPI_BYTE``), and
#: two user-defined operators made with ``MPI_Op_create``: ``user_sum`` (element-wise
#: sum, declared commutative) and ``user_first`` (``a o b = a``: associative, *not*
#: commutative, so the result is rank 0's input; for testing the refusal of algorithms that
#: need a commutative operator).
OPS: tuple[str, ...] = ("sum", "max", "min", "bor", "user_sum", "user_first")

#: The operators that may be applied in any order.
COMMUTATIVE_OPS: tuple[str, ...] = ("sum", "max", "min", "bor", "user_sum")

#: Datatypes each operator is defined on (MPI defines no sum on MPI_BYTE and no bitwise
#: or on MPI_DOUBLE).
OP_DATATYPES: dict[str, tuple[str, ...]] = {
    "sum": ("int", "double"), "max": ("int", "double"), "min": ("int", "double"),
    "bor": ("byte", "int"), "user_sum": ("byte", "int", "double"),
    "user_first": ("byte", "int", "double"),
}

#: The ``datatype:op[:data]`` combinations ``tuwviz verify`` crosses for reductions by
#: default.  Data are small integers (exact in any order of summation, so compared bit for
#: bit) unless ``:random``: doubles in (-1, 1) of magnitudes 2^-k, k < 24 (so that sums
#: round; uniform doubles lie on a grid of 2^-52 and add up exactly), compared with the
#: tolerance of :data:`RANDOM_SUM_TOLERANCE`.
REDUCTION_TYPES: tuple[str, ...] = (
    "int:sum", "int:max", "int:min", "double:sum", "double:max", "double:min", "byte:bor",
    "int:user_sum", "double:sum:random",
)

#: Data of a case: ``small`` integers (every order of summation gives the same result) or
#: ``random`` doubles in (-1, 1), of many magnitudes.
DATA_KINDS: tuple[str, ...] = ("small", "random")

#: Random doubles are summed in a different order by every algorithm; the results may differ
#: by rounding.  Summing p values in (-1, 1) in any order errs by at most
#: (p - 1) 2^-53 sum |x_i| < (p - 1) p 2^-53 (Higham, Accuracy and Stability of Numerical
#: Algorithms, 2002, Eq. (4.4)); verify accepts |got - expected| <= 2 (p - 1) p 2^-53,
#: twice that, since the library's own result errs as well.
RANDOM_SUM_TOLERANCE = "2 (p - 1) p 2^-53"


def parse_reduction_types(names) -> list[tuple[str, str, str]]:
    """``"datatype:op[:data]"`` names (e.g. ``"byte:bor"``) as checked (datatype, op, data).

    >>> parse_reduction_types(["int:sum", "byte:bor", "double:sum:random"])
    [('int', 'sum', 'small'), ('byte', 'bor', 'small'), ('double', 'sum', 'random')]
    >>> parse_reduction_types(["double:bor"])
    Traceback (most recent call last):
    ...
    ValueError: operator 'bor' is not defined on datatype 'double'; it takes byte, int
    """
    out = []
    for name in names:
        parts = str(name).strip().split(":")
        if len(parts) not in (2, 3):
            raise ValueError(f"{name!r} is not datatype:op, e.g. int:sum or byte:bor "
                             f"(or double:sum:random)")
        dt, op, data = parts if len(parts) == 3 else (*parts, "small")
        if dt not in DATATYPES:
            raise ValueError(f"unknown datatype {dt!r}; valid datatypes: {', '.join(DATATYPES)}")
        check_op(dt, op)
        if data not in DATA_KINDS:
            raise ValueError(f"unknown data {data!r}; valid: {', '.join(DATA_KINDS)}")
        if data == "random" and dt != "double":
            raise ValueError(f"random data are doubles; {name!r} is {dt}")
        out.append((dt, op, data))
    return out


def case_ranks(problem: dict) -> int:
    """Processes a problem (as :meth:`Problem.to_dict` gives it) runs on: p, or p + q.

    >>> case_ranks({"p": 5}), case_ranks({"p": 5, "q": 2})
    (5, 7)
    """
    return int(problem["p"]) + int(problem.get("q") or 0)


def default_op(datatype: str) -> str:
    """The operator a reduction uses when none is given: ``sum``, or ``bor`` on bytes (MPI
    has no sum on ``MPI_BYTE``; the circulant paper measures ``MPI_BOR`` there).

    >>> default_op("int"), default_op("byte")
    ('sum', 'bor')
    """
    return "bor" if datatype == "byte" else "sum"


def check_op(datatype: str, op: str) -> None:
    """Raise ValueError unless operator `op` is defined on `datatype`.

    >>> check_op("byte", "bor")
    >>> check_op("byte", "sum")
    Traceback (most recent call last):
    ...
    ValueError: operator 'sum' is not defined on datatype 'byte'; it takes int, double
    """
    if op not in OPS:
        raise ValueError(f"unknown op {op!r}; valid ops: {', '.join(OPS)}")
    if datatype not in OP_DATATYPES[op]:
        raise ValueError(f"operator {op!r} is not defined on datatype {datatype!r}; it takes "
                         f"{', '.join(OP_DATATYPES[op])}")

def order_free(datatype: str, op: str) -> bool:
    """Whether reducing with `op` on `datatype` gives the same bits in every order and
    bracketing of the operands: MPI's sum and bitwise or on the integer types (byte,
    int), max and min on every type; not sums of doubles (rounding depends on the order)
    and not the user-defined operators (nothing is known of them).

    Kernels whose ranks combine the inputs in rank-dependent orders use it to give every
    rank the same result (``allreduce/circulant``).  The Python twin of ``tuw_order_free``
    in ``kernels_c/common/reduction.c`` (tests/kernels/test_reductions.py compares them).

    >>> order_free("byte", "bor"), order_free("double", "max"), order_free("double", "sum")
    (True, True, False)
    >>> order_free("int", "user_sum")
    False
    """
    check_op(datatype, op)
    if op in ("max", "min"):
        return True
    return op in ("sum", "bor") and datatype in ("byte", "int")


SPIKES_RHO = 5

#: Byte that fills receive buffers before a call (verify, datatype pairs): a byte that
#: still holds it afterwards was never written, and bytes a kernel must not touch compare
#: as well.
FILL = 0x5A

#: Largest block size in elements: MPI counts are C ``int``.
MAX_COUNT = 2**31 - 1

def check_int(name: str, value, lo: int | None = None, hi: int | None = None,
              hint: str = "") -> int:
    """`value` as an int, or ValueError naming `name` (non-integers, NaN, out of bounds).

    Integral floats (``2.0``) are accepted; ``1.5``, ``nan``, ``True`` and text are not.
    `hint` is appended to an upper-bound message (e.g. how to raise the bound).

    Examples
    --------
    >>> check_int("b", 3.0), check_int("p", 4, lo=1)
    (3, 4)
    >>> check_int("b", 1.5)
    Traceback (most recent call last):
    ...
    ValueError: b must be an integer, got 1.5
    """
    import numbers

    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, numbers.Real)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if not isinstance(value, numbers.Integral):
        f = float(value)
        if f != f or f in (float("inf"), float("-inf")) or f != int(f):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if lo is not None and v < lo:
        raise ValueError(f"{name} must be at least {lo}, got {v}")
    if hi is not None and v > hi:
        raise ValueError(f"{name} must be at most {hi}, got {v}{hint}")
    return v


def check_buffer(problem: "Problem", max_bytes: int | None = None) -> None:
    """Raise ValueError if `problem` cannot run on MPI ranks: a count above C's ``int``,
    or a receive buffer above `max_bytes` (default :func:`tuwviz.config.max_buffer_bytes`,
    1 GiB)."""
    limit = config.max_buffer_bytes() if max_bytes is None else max_bytes
    big = max(problem.counts)
    if big > MAX_COUNT:
        raise ValueError(f"block size {big} of {problem.label()} exceeds MPI's int count "
                         f"limit {MAX_COUNT}")
    nbytes = problem.m * problem.itemsize
    if problem.collective in ("reduce", "allreduce", "bcast", "scatter", "scatterv"):
        nbytes = max(nbytes, problem.m_prime * problem.itemsize)
    if nbytes > limit:
        raise ValueError(f"{problem.label()} needs a {nbytes}-byte buffer per rank, above "
                         f"the limit of {limit} bytes (set TUWVIZ_MAX_BUFFER_BYTES to raise it)")


def _same(p: int, b: int, rng: np.random.Generator) -> np.ndarray:
    return np.full(p, b, dtype=np.int64)


def _random(p: int, b: int, rng: np.random.Generator) -> np.ndarray:
    if b == 0:
        return np.zeros(p, dtype=np.int64)
    return rng.integers(1, 2 * b, size=p, endpoint=True, dtype=np.int64)


def _spikes(p: int, b: int, rng: np.random.Generator) -> np.ndarray:
    spike = rng.random(p) < 1.0 / SPIKES_RHO
    return np.where(spike, SPIKES_RHO * b, 1).astype(np.int64)


def _decreasing(p: int, b: int, rng: np.random.Generator) -> np.ndarray:
    i = np.arange(p, dtype=np.int64)
    return (2 * b * (p - i)) // p + 1


def _alternating(p: int, b: int, rng: np.random.Generator) -> np.ndarray:
    i = np.arange(p)
    return np.where(i % 2 == 0, b + b // 2, b - b // 2).astype(np.int64)


def _two_blocks(p: int, b: int, rng: np.random.Generator) -> np.ndarray:
    counts = np.zeros(p, dtype=np.int64)
    counts[0] = b
    counts[p - 1] = b
    return counts


# The allgatherv paper's distributions (1)-(6), Section 3; b is its base count c.
def _regular(p: int, c: int, rng: np.random.Generator) -> np.ndarray:
    return np.full(p, c, dtype=np.int64)


def _broadcast(p: int, c: int, rng: np.random.Generator) -> np.ndarray:
    counts = np.zeros(p, dtype=np.int64)
    counts[0] = c
    return counts


def _spike(p: int, c: int, rng: np.random.Generator) -> np.ndarray:
    counts = np.full(p, c // (2 * (p - 1)) if p > 1 else 0, dtype=np.int64)
    counts[0] = c - counts[1:].sum()  # ~c/2; the remainder keeps m = c exactly
    return counts


def _half_full(p: int, c: int, rng: np.random.Generator) -> np.ndarray:
    i = np.arange(p)
    return np.where(i % 2 == 0, 2 * c, 0).astype(np.int64)


def _linear_decreasing(p: int, c: int, rng: np.random.Generator) -> np.ndarray:
    if p == 1:
        return np.array([c], dtype=np.int64)
    i = np.arange(p, dtype=np.int64)
    return (2 * c * (p - 1 - i)) // (p - 1)


def _geometric(p: int, c: int, rng: np.random.Generator) -> np.ndarray:
    if p == 1:
        return np.array([c], dtype=np.int64)
    k = np.arange(p, dtype=np.int64)
    group = 2 ** np.floor(np.log2(k + 1)).astype(np.int64)  # i = 1, 2, 4, ... holds k = i-1+j
    return np.floor(c * p / (group * np.log2(p))).astype(np.int64)


# The intergroup paper's (Kang, Träff et al. 2019, Section 5) irregular sizes, per group.
def _arithmetic(p: int, b: int, rng: np.random.Generator) -> np.ndarray:
    # settings 6 and 8: "rank i sends a message of size k i" (k = b)
    return b * np.arange(p, dtype=np.int64)


def _qiaok(p: int, b: int, rng: np.random.Generator) -> np.ndarray:
    # the paper's evaluation code: rank i sends 2 (i + 1) ceil(b / p)
    return 2 * (np.arange(p, dtype=np.int64) + 1) * (-(-b // p))


#: Block-size distributions by name; each maps (p, b, rng) to the counts m_0..m_{p-1}.
DISTRIBUTIONS: dict[str, Callable[[int, int, np.random.Generator], np.ndarray]] = {
    "same": _same,
    "random": _random,
    "spikes": _spikes,
    "decreasing": _decreasing,
    "alternating": _alternating,
    "two_blocks": _two_blocks,
    "regular": _regular,
    "broadcast": _broadcast,
    "spike": _spike,
    "half_full": _half_full,
    "linear_decreasing": _linear_decreasing,
    "geometric": _geometric,
    "arithmetic": _arithmetic,
    "qiaok": _qiaok,
}

#: Which paper each distribution comes from, in the paper's order.
PAPER_DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "gatherv": ("same", "random", "spikes", "decreasing", "alternating", "two_blocks"),
    "allgatherv": ("regular", "broadcast", "spike", "half_full", "linear_decreasing",
                   "geometric"),
    "intergroup": ("regular", "arithmetic", "qiaok"),
}

# Collectives whose paper is the allgatherv paper; all others use the gatherv paper's.
_ALLGATHER_FAMILY = ("allgather", "allgatherv")


def default_distributions(collective_name: str) -> tuple[str, ...]:
    """The distributions of the paper that studies `collective_name`, for default sweeps.

    A regular collective (Gather, Scatter, Allgather, the reductions) has equal blocks:
    every distribution would only change their size b, which sweeps vary by themselves,
    so its default is the first distribution alone (``same``, or ``regular``).

    Examples
    --------
    >>> default_distributions("allgatherv")[:3]
    ('regular', 'broadcast', 'spike')
    >>> default_distributions("scatterv")[0], default_distributions("gather")
    ('same', ('same',))
    """
    info = collective_info(collective_name)
    dists = PAPER_DISTRIBUTIONS["allgatherv" if info.name in _ALLGATHER_FAMILY else "gatherv"]
    return dists if info.irregular else dists[:1]


def normalize_distribution(name: str) -> str:
    """Return the canonical name of distribution `name` (``"Two-blocks"`` -> ``"two_blocks"``).

    Raises
    ------
    ValueError
        If no distribution has that name; the message lists the valid names.
    """
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    if key not in DISTRIBUTIONS:
        valid = ", ".join(DISTRIBUTIONS)
        raise ValueError(f"unknown distribution {name!r}; valid distributions: {valid}")
    return key


def distribution_counts(name: str, p: int, b: int, seed: int = 0) -> np.ndarray:
    """Block sizes ``m_0, ..., m_{p-1}`` of distribution `name`.

    Parameters
    ----------
    name : str
        A key of :data:`DISTRIBUTIONS` (case and ``-``/``_`` do not matter).
    p : int
        Number of processes, at least 1.
    b : int
        The average block size the paper calls ``b`` (elements), at least 0.
    seed : int, optional
        Seed for the random distributions; the same seed gives the same counts on
        every process, so no communication is needed to agree on them.

    Returns
    -------
    numpy.ndarray
        ``p`` non-negative int64 counts.

    Examples
    --------
    >>> distribution_counts("alternating", 4, 10).tolist()
    [15, 5, 15, 5]
    """
    fn = DISTRIBUTIONS[normalize_distribution(name)]
    p = check_int("number of processes p", p, lo=1)
    b = check_int("block size b", b, lo=0)
    if b > 2**62 // max(p, SPIKES_RHO):  # the distributions compute in int64
        raise ValueError(f"block size b={b} is too large for p={p} (int64 overflow)")
    return fn(p, b, np.random.default_rng(seed))


@dataclass(frozen=True)
class Problem:
    """One instance of a collective: sizes per process, root, element type.

    Attributes
    ----------
    collective : str
        Name of the collective (see :mod:`tuwviz.collectives`).
    p : int
        Number of processes.
    root : int
        Root process (0 for collectives without a root).
    counts : tuple of int
        ``m_i``: elements process ``i`` contributes (irregular collectives).  For regular
        collectives every process uses ``max(counts)``, the padded block of Guideline (2).
    datatype : str
        Element type, a key of :data:`DATATYPES`.
    op : str
        Reduction operator for reductions.
    distribution, b, seed
        Where the counts came from (for labels and result rows).
    q : int
        0 for one group (an intra-communicator).  Otherwise the problem is intergroup
        (Allgather and Allgatherv on an inter-communicator, Kang, Träff et al. 2019): group
        A is processes ``0..p-1``, group B the ``q`` processes after them, ``counts`` holds
        A's ``p`` blocks then B's ``q`` (``k_A,i`` then ``k_B,j``), and ``b`` is A's
        average block size, ``b_b`` B's.
    b_b : int or None
        B's average block size (intergroup problems).
    """

    collective: str
    p: int
    root: int
    counts: tuple[int, ...]
    datatype: str = "int"
    op: str = "sum"
    distribution: str = "custom"
    b: int | None = None
    seed: int = 0
    meta: dict = field(default_factory=dict, compare=False)
    q: int = 0
    b_b: int | None = None

    def __post_init__(self) -> None:
        info = collective_info(self.collective)
        object.__setattr__(self, "collective", info.name)
        object.__setattr__(self, "q", check_int("size q of group B", self.q, lo=0))
        if self.q and info.name not in INTERGROUP_COLLECTIVES:
            raise ValueError(f"two groups (q={self.q}) are for {', '.join(INTERGROUP_COLLECTIVES)} "
                             f"on an inter-communicator, not {info.name}")
        if isinstance(self.counts, (str, bytes)):
            raise ValueError(f"counts must be a list of integers, got {self.counts!r}")
        object.__setattr__(self, "counts", tuple(check_int(f"count m_{i}", c)
                                                 for i, c in enumerate(self.counts)))
        object.__setattr__(self, "p", check_int("number of processes p", self.p, lo=1))
        object.__setattr__(self, "root", check_int("root", self.root))
        if len(self.counts) != self.size:
            which = f"p+q={self.p}+{self.q}" if self.q else f"p={self.p}"
            raise ValueError(f"got {len(self.counts)} block sizes for {which} processes")
        negative = [i for i, c in enumerate(self.counts) if c < 0]
        if negative:
            i = negative[0]
            raise ValueError(f"negative count m_{i}={self.counts[i]} for process {i}")
        if not 0 <= self.root < self.p:
            raise ValueError(f"root {self.root} out of range 0..{self.p - 1}")
        if self.datatype not in DATATYPES:
            raise ValueError(
                f"unknown datatype {self.datatype!r}; valid datatypes: {', '.join(DATATYPES)}"
            )
        if self.op not in OPS:
            raise ValueError(f"unknown op {self.op!r}; valid ops: {', '.join(OPS)}")
        if info.reduction:
            check_op(self.datatype, self.op)

    @property
    def size(self) -> int:
        """Processes the problem runs on: ``p``, or ``p + q`` for two groups."""
        return self.p + self.q

    @property
    def inter(self) -> bool:
        """True for an intergroup problem (two groups, an inter-communicator)."""
        return self.q > 0

    def group(self, i: int) -> tuple[int, int]:
        """``(g, local rank)`` of process `i`: g = 0 in group A, 1 in group B.

        >>> make_problem("allgather", 3, b=1, q=2).group(4)
        (1, 1)
        """
        return (0, i) if i < self.p else (1, i - self.p)

    def group_counts(self, g: int) -> tuple[int, ...]:
        """The blocks of group `g` (0: A's ``k_A,i``, 1: B's ``k_B,j``) as the collective
        sees them (padded to the group's largest for Allgather)."""
        return self.block_counts()[:self.p] if g == 0 else self.block_counts()[self.p:]

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return DATATYPES[self.datatype]

    @property
    def m(self) -> int:
        """Total elements gathered, ``m = sum_i m_i`` (the papers' ``m``)."""
        return sum(self.counts)

    @property
    def block(self) -> int:
        """Padded block size ``max_i m_i``: the count regular collectives use."""
        return max(self.counts)

    @property
    def m_prime(self) -> int:
        """Padded total ``m' = p * max_i m_i`` (gatherv paper, Guideline (2))."""
        return sum(self.block_counts()) if self.q else self.p * self.block

    def block_counts(self) -> tuple[int, ...]:
        """Counts per process as the collective sees them (padded if it is regular; for
        two groups each group's own largest block)."""
        if collective_info(self.collective).irregular:
            return self.counts
        if self.q:
            a, b = max(self.counts[:self.p]), max(self.counts[self.p:])
            return (a,) * self.p + (b,) * self.q
        return (self.block,) * self.p

    def nbytes(self, i: int) -> int:
        """Bytes of process `i`'s block."""
        return self.block_counts()[i] * self.itemsize

    def label(self) -> str:
        """Short human-readable description for plots and reports."""
        if self.q:
            return (f"{self.collective} groups={self.p},{self.q} {self.distribution} "
                    f"b={self.b},{self.b_b}")
        return f"{self.collective} p={self.p} root={self.root} {self.distribution} b={self.b}"

    def to_dict(self) -> dict:
        """JSON-able description (used to ship a problem to MPI ranks)."""
        d = {
            "collective": self.collective, "p": self.p, "root": self.root,
            "counts": list(self.counts), "datatype": self.datatype, "op": self.op,
            "distribution": self.distribution, "b": self.b, "seed": self.seed,
        }
        if self.q:
            d.update(q=self.q, b_b=self.b_b)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Problem":
        """Inverse of :meth:`to_dict`."""
        return cls(**{k: d[k] for k in (
            "collective", "p", "root", "counts", "datatype", "op", "distribution", "b", "seed",
            "q", "b_b") if k in d})


def make_problem(
    collective: str,
    p: int,
    distribution: str = "same",
    b: int = 1,
    root: int | None = None,
    seed: int = 0,
    datatype: str = "int",
    op: str = "sum",
    q: int | None = None,
    b_b: int | None = None,
) -> Problem:
    """Build a :class:`Problem` from a named distribution.

    With `q`, an intergroup problem (Allgather, Allgatherv): group A of `p` processes with
    blocks from (`distribution`, `b`), group B of `q` with (`distribution`, `b_b`, default
    `b`), as in the intergroup paper's settings (e.g. ``k_A = 4 k_B``).

    >>> pr = make_problem("allgatherv", 3, "arithmetic", 10, q=2, b_b=5)
    >>> pr.counts, pr.size, pr.group_counts(1)
    ((0, 10, 20, 0, 5), 5, (0, 5))

    Parameters
    ----------
    collective : str
        Name of the collective.
    p : int
        Number of processes.
    distribution : str, optional
        Name of a block-size distribution (see :data:`DISTRIBUTIONS`).
    b : int, optional
        Average block size in elements.
    root : int, optional
        Root process; defaults to ``p // 2``, the gatherv paper's fixed root
        ``r = floor(p/2)``, for rooted collectives and to 0 otherwise.
    seed : int, optional
        Seed for random distributions.
    datatype, op : str, optional
        Element type and reduction operator.

    Raises
    ------
    ValueError
        For an unknown collective or distribution, ``p < 1``, ``b < 0`` or a root
        outside ``0..p-1``.
    """
    info = collective_info(collective)
    dist = normalize_distribution(distribution)
    p = check_int("number of processes p", p, lo=1)
    b = check_int("block size b", b, lo=0)
    seed = check_int("seed", seed, lo=0)
    if root is None:
        root = p // 2 if info.rooted else 0
    counts = distribution_counts(dist, p, b, seed)
    if q:
        q = check_int("size q of group B", q, lo=1)
        b_b = b if b_b is None else check_int("block size b of group B", b_b, lo=0)
        counts = np.concatenate([counts, distribution_counts(dist, q, b_b, seed + 1)])
    else:
        q, b_b = 0, None
    return Problem(
        collective=info.name, p=p, root=root, counts=tuple(counts.tolist()),
        datatype=datatype, op=op, distribution=dist, b=b, seed=seed, q=q, b_b=b_b,
    )

