"""Check every registered kernel against the MPI library's own collective.

For each case the same random input goes through the library's collective (called by
mpi4py) and through the kernel; every rank that holds output compares the two receive
buffers element by element (receive buffers start filled with a sentinel, so writing
where a kernel should not also shows); a difference is reported as whose block, which
element, and the expected and received values of the datatype.  Failures are grouped per
algorithm into one line saying which cases fail (``p >= 3 and root != 0``).  The sweep covers every block-size distribution of the
collective's paper, roots 0, p/2 and p-1, every p asked for, b = 0 (all blocks empty),
and the parameter settings of :func:`tuwviz.params.verify_variants` (e.g. several block
sizes of the pipelined ring) by default.

It also crosses *datatype pairs* (:mod:`tuwviz.run.typepairs`) for the data-movement
collectives: the root's datatype and counts differ from each process's own while the type
signatures match, as MPI allows (a derived root side with gaps or another extent, mixed
own types, ``MPI_IN_PLACE``).  The pair ``same`` is the sweep above; each other pair runs
once per p, root, algorithm and parameter setting, at the largest b, the distributions
taking turns, and is compared byte for byte with the library's collective.  The pairs
``null`` and ``null-in-place`` are the zero-size call with NULL buffers (and MPI_IN_PLACE),
for every collective, on two groups too: every rank must return MPI_SUCCESS.

Where every process receives the same result (Allreduce, Allgather(v)), the ranks'
results must also be the same bits: rounding may make a sum of random doubles differ from
the library's within the tolerance, but never from rank to rank (an iterative solver
whose ranks disagree on a residual takes different branches).

Examples
--------
>>> report = verify(["gatherv"], ["linear"], ps=range(1, 4), dists=["random"])
>>> report.ok, len(report.results)  # 6 (p, root) x 3 b, and 6 (p, root) x 7 datatype pairs
(True, 60)
>>> sorted({r["types"] for r in report.results})  # doctest: +NORMALIZE_WHITESPACE
['in-place', 'null', 'null-in-place', 'own-mixed', 'root-contig', 'root-resized',
 'root-vector', 'same']
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from .. import config, kernels
from ..errors import RankFailure, TuwvizError, case_label
from ..collectives import COLLECTIVES, collective
from ..run.launch import Backend, check_ranks, mpiexec_backend, record_launch
from ..params import label, verify_variants
from ..problems import (COMMUTATIVE_OPS, DATATYPES, MAX_COUNT, REDUCTION_TYPES, case_ranks,
                        INTERGROUP_COLLECTIVES, PAPER_DISTRIBUTIONS, check_buffer, check_int,
                        make_problem, parse_reduction_types)
from ..report import ranges
from .sweep import (MAX_CASES, check_groups_fit, distributions, int_values, parse_groups,
                    parse_names, parse_roots, roots_for)
from ..run.typepairs import NULL_PAIRS, PAIRS, check_pairs, pairs_for
from ..report import text_table

#: What the message of a too-large p says to raise the limit.
RANKS_HINT = " ranks (the limit of this machine; set TUWVIZ_MAX_RANKS to raise it)"

__all__ = ["VerifyReport", "run_verify", "verify", "verify_case", "verify_cases", "DEFAULT_B",
           "describe_failure",
           "describe_group", "describe_mismatch"]

#: Average block sizes verified by default: all-empty blocks, single elements, and an odd
#: size that is no power of two.
DEFAULT_B = (0, 1, 17)


def _selected(collectives, algorithms, kind: str = "intra") -> list[tuple[str, str]]:
    """(collective, algorithm) pairs to verify on communicators of `kind` ("intra" or
    "inter"); unknown names raise with the valid ones."""
    colls = [collective(c).name for c in collectives] if collectives else list(COLLECTIVES)
    pairs = []
    for c in colls:
        registered = [a.name for a in kernels.algorithms(c) if a.serves(kind)]
        wanted = registered if algorithms is None else [a for a in algorithms if a in registered]
        pairs.extend((c, a) for a in wanted)
    if algorithms:
        everywhere = {a for c in colls for a in (x.name for x in kernels.algorithms(c))
                      if kernels.find_algorithm(c, a).serves(kind)}
        unknown = [a for a in algorithms if a not in everywhere]
        other = {a for c in colls for a in (x.name for x in kernels.algorithms(c))} - everywhere
        if unknown and unknown[0] in other:
            need = "two groups (--groups P,Q)" if kind == "intra" else "one group (--np)"
            raise ValueError(f"algorithm {unknown[0]!r} runs on {need}; for "
                             f"{', '.join(colls)} on {'one group' if kind == 'intra' else 'two groups'}"
                             f" the algorithms are: {', '.join(sorted(everywhere))}")
        if unknown:
            raise ValueError(
                f"unknown algorithm {unknown[0]!r} for {', '.join(colls)}; valid algorithms: "
                f"{', '.join(sorted(everywhere))}"
            )
    return pairs


def verify_cases(
    collectives: Iterable[str] | None = None,
    algorithms: Iterable[str] | None = None,
    ps: Iterable[int] = range(1, 10),
    dists: Iterable[str] | None = None,
    bs: Iterable[int] = DEFAULT_B,
    roots: Iterable[int | str] | None = None,
    seed: int = 0,
    types: Iterable[str] | None = None,
    ops: Iterable[str] | None = None,
    groups=None,
) -> list[dict]:
    """The cases a verification sweep runs (see :func:`verify` for the parameters).

    Every argument is checked before the first case is built; an empty selection (no p,
    no b, no algorithm) is an error, and so are roots for collectives without a root.
    """
    collectives = parse_names(collectives)  # a single name is one collective
    algorithms = parse_names(algorithms)
    if groups is not None:
        return _inter_cases(collectives, algorithms, groups, dists, bs, roots, seed, types, ops)
    ps = sorted(set(int_values("ps", ps, lo=1)))
    bs = int_values("bs", bs, lo=0, hi=MAX_COUNT)
    if roots is not None:
        roots = parse_roots(roots)  # numbers, or p/2 and p-K resolved per p
    seed = check_int("seed", seed, lo=0)
    reduction_types = parse_reduction_types(parse_names(ops) if ops is not None
                                            else REDUCTION_TYPES)
    if not reduction_types:
        raise ValueError("empty selection: no datatype:op given")
    types = check_pairs(parse_names(types)) if types is not None else None
    if types is not None and not types:
        raise ValueError("empty selection: no datatype pair given")
    pairs = _selected(collectives, algorithms)
    if not pairs:
        raise ValueError("empty selection: no algorithm to verify")
    if roots is not None and not any(collective(c).rooted for c, _ in pairs):
        names = ", ".join(sorted({c for c, _ in pairs}))
        raise ValueError(f"{names} has no root; leave out roots (--roots)")
    refused = [f"{c}/{a}" for c, a in pairs if collective(c).reduction
               and kernels.find_algorithm(c, a).needs_commutative
               and any(op not in COMMUTATIVE_OPS for _, op, _ in reduction_types)]
    if refused:
        bad = sorted({op for _, op, _ in reduction_types if op not in COMMUTATIVE_OPS})
        raise ValueError(f"{', '.join(refused)} {'needs' if len(refused) == 1 else 'need'} a "
                         f"commutative operator; {', '.join(bad)} "
                         f"{'is' if len(bad) == 1 else 'are'} not (choose --algorithms "
                         f"native, or commutative operators: {', '.join(COMMUTATIVE_OPS)})")
    for coll, _ in pairs:
        dlist = distributions(dists, coll)  # unknown names fail here
        if not dlist:
            raise ValueError("empty selection: no distribution given")
    if types is not None and not any(t in pairs_for(c) for c, _ in pairs for t in types):
        applies = sorted({t for c, _ in pairs for t in pairs_for(c)}, key=PAIRS.index)
        raise ValueError(f"datatype pairs {', '.join(types)} do not apply to "
                         f"{', '.join(sorted({c for c, _ in pairs}))} (these do: "
                         f"{', '.join(applies)})")
    cases = []

    def add(case):
        if len(cases) >= MAX_CASES:
            raise ValueError(f"more than {MAX_CASES:,} cases: choose fewer p, b, distributions, "
                             f"datatype pairs or algorithms (tuwviz.experiments.sweep.MAX_CASES)")
        cases.append(case)

    for p in ps:
        for coll, alg in pairs:
            dlist = distributions(dists, coll)
            in_place = kernels.find_algorithm(coll, alg).in_place
            wanted = [t for t in pairs_for(coll, in_place=in_place)
                      if types is None or t in types]
            # reductions: every (datatype, operator); the others move ints
            dt_ops = (reduction_types if collective(coll).reduction
                      else [("int", "sum", "small")])
            if "same" in wanted:
                seen = set()  # b = 0 gives every distribution the same empty blocks: run once
                for dist in dlist:
                    for b in bs:
                        for root in roots_for(coll, p, roots):
                            for dt, op, data in dt_ops:
                                pr = make_problem(coll, p, dist, b, root=root, seed=seed,
                                                  datatype=dt, op=op)
                                key = (b, root, dt, op, data, tuple(pr.counts))
                                if b == 0 and key in seen:
                                    continue
                                seen.add(key)
                                check_buffer(pr)
                                for params in verify_variants(coll, alg, p):
                                    add(verify_case(pr, alg, seed, params, data=data))
            others = [t for t in wanted if t != "same"]
            for root in (roots_for(coll, p, roots) if others else ()):
                for params in verify_variants(coll, alg, p):
                    for k, pair in enumerate(others):
                        if pair in NULL_PAIRS:  # the zero-size call: every count 0
                            pr = make_problem(coll, p, "same", 0, root=root, seed=seed)
                        else:  # one case per pair; distributions take turns over p, root, pair
                            pr = make_problem(coll, p, dlist[(k + p + root) % len(dlist)],
                                              max(bs), root=root, seed=seed, datatype="int")
                        check_buffer(pr)
                        add(verify_case(pr, alg, seed, params, pair))
    return cases


def _inter_cases(collectives, algorithms, groups, dists, bs, roots, seed, types, ops) -> list[dict]:
    """Two-group cases: every (p, q), algorithm, distribution (default: the intergroup
    paper's, :data:`~tuwviz.problems.PAPER_DISTRIBUTIONS` ``"intergroup"``) and b, with
    B's blocks as large as A's, larger (2b + 3) and smaller (A's 2b + 3)."""
    groups = parse_groups(groups)
    bs = int_values("bs", bs, lo=0, hi=MAX_COUNT)
    seed = check_int("seed", seed, lo=0)
    colls = [collective(c).name for c in collectives] if collectives else list(INTERGROUP_COLLECTIVES)
    bad = [c for c in colls if c not in INTERGROUP_COLLECTIVES]
    if bad:
        raise ValueError(f"two groups (--groups) are for {', '.join(INTERGROUP_COLLECTIVES)} "
                         f"on an inter-communicator, not {', '.join(bad)}")
    if roots is not None:
        raise ValueError(f"{', '.join(colls)} has no root; leave out roots (--roots)")
    two_groups = pairs_for("allgather", inter=True)
    types = check_pairs(parse_names(types)) if types is not None else list(two_groups)
    if set(types) - set(two_groups):
        raise ValueError("datatype pairs are not run on two groups, only the zero-size call "
                         "with NULL buffers; leave out --types (or give --types same,null)")
    if ops is not None:
        raise ValueError("--ops is for the reductions; two groups run allgather and allgatherv")
    pairs = _selected(colls, algorithms, "inter")
    if not pairs:
        raise ValueError("empty selection: no algorithm to verify")
    dlist = distributions(dists) if dists is not None else list(PAPER_DISTRIBUTIONS["intergroup"])
    if not dlist:
        raise ValueError("empty selection: no distribution given")
    cases = []
    for p, q in groups:
        for coll, alg in pairs:
            if "null" in types:  # the zero-size call with NULL buffers
                cases.append(verify_case(make_problem(coll, p, "same", 0, seed=seed, q=q, b_b=0),
                                         alg, seed, types="null"))
            for dist in (dlist if "same" in types else ()):
                for b in bs:
                    for ba, bb in sorted({(b, b), (b, 2 * b + 3), (2 * b + 3, b)}):
                        pr = make_problem(coll, p, dist, ba, seed=seed, q=q, b_b=bb)
                        check_buffer(pr)
                        if len(cases) >= MAX_CASES:
                            raise ValueError(f"more than {MAX_CASES:,} cases: choose fewer "
                                             f"groups, b, distributions or algorithms")
                        cases.append(verify_case(pr, alg, seed))
    return cases


def verify_case(problem, algorithm: str, seed: int = 0, params: dict | None = None,
                types: str = "same", data: str = "small") -> dict:
    """One verification case (see :mod:`tuwviz.run.runner`): `algorithm` on `problem` against
    the library, data from `seed`, with tuning `params` and datatype pair `types`
    (:mod:`tuwviz.run.typepairs`; ``"same"``: the problem's datatype on both sides).

    Examples
    --------
    >>> case = verify_case(make_problem("gather", 2, "same", 1), "binomial", types="in-place")
    >>> case["mode"], case["algorithm"], case["types"], case["problem"]["p"]
    ('verify', 'binomial', 'in-place', 2)
    """
    case = {"mode": "verify", "problem": problem.to_dict(), "algorithm": algorithm,
            "data_seed": seed, "params": params or {}}
    if data != "small":  # random doubles (reductions), compared with a tolerance
        case["data"] = data
    if types != "same":
        case["types"] = types
    return case


@dataclass
class VerifyReport:
    """Outcome of a verification sweep: one record per finished case.

    Each record has ``collective, algorithm, p, root, distribution, b, m`` (the elements
    of all blocks together), ``params`` (the tuning parameters as text,
    :func:`tuwviz.params.label`), ``ok`` and ``mismatches``:
    for each rank whose output differs, its ``rank``; the first differing element, as
    ``block`` (the rank whose block it is; None for a reduction's result), ``element``
    (its index within that block) and ``index`` (within the receive buffer);
    ``expected`` and ``got`` as values of the ``datatype``; ``never_written`` (the
    element still holds the fill pattern); ``differing_elements`` of ``elements``; and
    ``blocks``, every rank whose block has a differing element.  ``types`` is the
    datatype pair (:mod:`tuwviz.run.typepairs`); a pair case's mismatch names the ``pair``,
    the ``buffer`` and the first differing ``byte`` instead of an element, with
    ``differing_bytes`` of ``bytes`` and the ``block`` it lies in (None: a gap).

    `aborted` is the :class:`~tuwviz.errors.RankFailure` that stopped the run early (a
    rank died or hung); the records are then the cases finished before it.  `library` is
    what the kernels were compared with (the backend says, e.g. SMPI's collectives on a
    simulated platform).
    """

    results: list[dict] = field(default_factory=list)
    aborted: RankFailure | None = None
    library: str = "the MPI library"

    @property
    def ok(self) -> bool:
        """True if every case ran and matched the library."""
        return self.aborted is None and all(r["ok"] for r in self.results)

    def failures(self) -> list[dict]:
        """Records of the cases that did not match."""
        return [r for r in self.results if not r["ok"]]

    def summary(self) -> list[dict]:
        """One row per (collective, algorithm): cases, passed, failed, p range."""
        groups: dict[tuple, list] = defaultdict(list)
        for r in self.results:
            groups[(r["collective"], r["algorithm"])].append(r)
        rows = []
        for (c, a), rs in groups.items():
            ps = sorted({r["p"] for r in rs})
            passed = sum(r["ok"] for r in rs)
            rows.append({"collective": c, "algorithm": a, "cases": len(rs), "passed": passed,
                         "failed": len(rs) - passed, "p": f"{ps[0]}-{ps[-1]}"})
            qs = sorted({r["q"] for r in rs if r.get("q")})
            if qs:  # two groups: the sizes of B too
                rows[-1]["q"] = f"{qs[0]}-{qs[-1]}"
        return rows

    def failure_groups(self) -> list[dict]:
        """The failures grouped per (collective, algorithm), each in a few words.

        Each group has ``collective, algorithm``, ``failed`` of ``cases``, ``where``: the
        cases that fail, as a condition on p, root, distribution, b and parameters (e.g.
        ``p >= 3 and root != 0``; m is the elements the collective moves), ``matching``,
        how many cases meet it, ``exact`` (True if exactly the cases meeting `where` fail,
        False if only some of them do) and ``first``, the first failing case's record.
        """
        groups = []
        for row in self.summary():
            if not row["failed"]:
                continue
            key = (row["collective"], row["algorithm"])
            runs = [r for r in self.results if (r["collective"], r["algorithm"]) == key]
            failed = [r for r in runs if not r["ok"]]
            where, matching = _condition(failed, runs)
            groups.append({"collective": key[0], "algorithm": key[1], "failed": len(failed),
                           "cases": len(runs), "where": where, "matching": matching,
                           "exact": matching == len(failed), "first": failed[0]})
        return groups

    def table(self) -> str:
        """The summary as a text table, then one line per failing algorithm."""

        lines = [text_table(self.summary())] if self.results else []
        groups = self.failure_groups()
        lines += ["FAIL " + describe_group(g) for g in groups]
        if groups:
            lines.append("(every failing case, element by element: tuwviz verify ... --json, "
                         "or VerifyReport.failures())")
        bad = len(self.failures())
        verdict = f"all cases match {self.library}" if not bad else f"{bad} cases FAILED"
        if self.aborted is not None and not self.results:
            lines.append("no case finished before the run was aborted")
        elif self.aborted is not None:
            lines.append(f"{len(self.results)} cases finished before the run was aborted: {verdict}")
        else:
            lines.append(f"{len(self.results)} cases: {verdict}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        out = {"ok": self.ok, "summary": self.summary(), "failures": self.failures(),
               "groups": [{**g, "text": describe_group(g)} for g in self.failure_groups()],
               "cases": len(self.results), "complete": self.aborted is None}
        if self.aborted is not None:
            out["aborted"] = self.aborted.to_dict()
        return out


def describe_mismatch(m: dict) -> str:
    """One rank's wrong output in the user's terms: block, element, values.

    Examples
    --------
    >>> describe_mismatch({"rank": 3, "block": None, "element": 0, "index": 0,
    ...     "expected": 0.30000000000000004, "got": 0.3, "differing_elements": 1,
    ...     "elements": 4, "datatype": "double", "differs_from_rank": 0})
    "at rank 3: its result is not rank 0's bit for bit (every rank must get the same result): element 0: rank 0 has 0.30000000000000004, rank 3 0.3; 1 of 4 double elements differ"
    >>> describe_mismatch({"rank": 2, "block": 0, "element": 0, "index": 0, "expected": 5,
    ...     "got": 1515870810, "never_written": True, "differing_elements": 8,
    ...     "elements": 8, "blocks": [0, 1, 2, 3], "datatype": "int"})
    "at rank 2: rank 0's block, element 0 (byte 0 of the buffer): expected 5, got 1515870810 (never written); 8 of 8 int elements differ, in the blocks of ranks 0-3"
    """
    if "byte" in m:  # a datatype-pair case: bytes, gaps included, in the pair's layout
        where = "a gap between blocks" if m["block"] is None else f"rank {m['block']}'s block"
        never = " (never written)" if m.get("never_written") else ""
        return (f"at rank {m['rank']} (types {m['pair']}): {m['buffer']}, byte {m['byte']} "
                f"({where}): expected {m['expected']}, got {m['got']}{never}; "
                f"{m['differing_bytes']} of {m['bytes']} bytes differ")
    if "differs_from_rank" in m:  # all ranks must hold the same bits (Allreduce)
        other = m["differs_from_rank"]
        return (f"at rank {m['rank']}: its result is not rank {other}'s bit for bit (every "
                f"rank must get the same result): element {m['element']}: rank {other} has "
                f"{m['expected']!r}, rank {m['rank']} {m['got']!r}; {m['differing_elements']} "
                f"of {m['elements']} {m.get('datatype', '')} elements differ")
    where = "the result" if m["block"] is None else f"rank {m['block']}'s block"
    never = " (never written)" if m.get("never_written") else ""
    size = DATATYPES.get(m.get("datatype", ""))
    byte = f" (byte {m['index'] * size} of the buffer)" if size and m.get("index") is not None else ""
    text = (f"at rank {m['rank']}: {where}, element {m['element']}{byte}: expected {m['expected']}, "
            f"got {m['got']}{never}; {m['differing_elements']} of {m['elements']} "
            f"{m.get('datatype', '')} elements differ".replace("  ", " "))
    if len(m.get("blocks", [])) > 1:
        text += f", in the blocks of ranks {ranges(m['blocks'])}"
    return text


def describe_failure(r: dict) -> str:
    """One failed case in words: the case, then the first rank with wrong output (and how
    many more have some)."""
    return f"{case_label(r)}: {_wrong_output(r)}"


def _wrong_output(r: dict) -> str:
    # the first rank with wrong output, and how many more have some
    more = len(r["mismatches"]) - 1
    text = describe_mismatch(r["mismatches"][0])
    return text + (f" (and {more} more rank{'s' * (more > 1)} with wrong output)" if more else "")


def describe_group(g: dict) -> str:
    """``gatherv/mine: wrong for every case with p >= 3 and root != 0 (24 of 54 cases);
    first: ...``"""
    name = f"{g['collective']}/{g['algorithm']}"
    if not g["where"]:
        which = f"wrong in every case ({g['cases']} cases)" if g["exact"] else \
            f"wrong in {g['failed']} of {g['cases']} cases"
    elif g["exact"]:
        which = f"wrong for every case with {g['where']} ({g['failed']} of {g['cases']} cases)"
    else:
        which = (f"wrong in {g['failed']} of the {g['matching']} cases with {g['where']} "
                 f"({g['cases']} cases run)")
    first = g["first"]
    return f"{name}: {which}; first: {case_label(first, name=False)}: {_wrong_output(first)}"


def _is_pow2(p: int) -> bool:
    return p & (p - 1) == 0


def _predicates(failed: list[dict], runs: list[dict]) -> list[list[tuple[str, Callable]]]:
    """Candidate conditions per case property, simplest first; "" is "any"."""
    def listed(key, name):
        vals = sorted({r[key] for r in failed}, key=str)
        text = f"{name} = {', '.join(map(str, vals))}" if len(vals) > 1 else f"{name} = {vals[0]}"
        return text, lambda r: r[key] in vals

    ps = sorted({r["p"] for r in runs})
    p_preds = [("", lambda r: True)]
    p_preds += [(f"p >= {k}", lambda r, k=k: r["p"] >= k) for k in ps[1:]]
    p_preds += [(f"p <= {k}", lambda r, k=k: r["p"] <= k) for k in ps[:-1]]
    p_preds += [("p a power of two", lambda r: _is_pow2(r["p"])),
                ("p not a power of two", lambda r: not _is_pow2(r["p"])),
                ("p even", lambda r: r["p"] % 2 == 0), ("p odd", lambda r: r["p"] % 2 == 1),
                listed("p", "p")]
    root_preds = [("", lambda r: True),
                  ("root = 0", lambda r: r["root"] == 0), ("root != 0", lambda r: r["root"] != 0),
                  ("root = p-1", lambda r: r["root"] == r["p"] - 1),
                  ("root != p-1", lambda r: r["root"] != r["p"] - 1),
                  ("root = p/2", lambda r: r["root"] == r["p"] // 2),
                  ("0 < root < p-1", lambda r: 0 < r["root"] < r["p"] - 1), listed("root", "root")]
    dists = sorted({r["distribution"] for r in runs})
    dist_preds = [("", lambda r: True), listed("distribution", "dist")]
    dist_preds += [(f"dist != {d}", lambda r, d=d: r["distribution"] != d) for d in dists]
    b_preds = [("", lambda r: True), ("m > 0", lambda r: r.get("m", 1) > 0),
               ("b > 0", lambda r: r["b"] > 0), listed("b", "b")]
    param_preds = [("", lambda r: True), listed("params", "params")]
    type_preds = [("", lambda r: True), listed("types", "types")]
    if len({r.get("types", "same") for r in runs} - {"same"}) > 1:  # else "types = x" says it
        type_preds.insert(1, ("types != same", lambda r: r.get("types", "same") != "same"))
    return [p_preds, root_preds, dist_preds, b_preds, param_preds, type_preds]


def _condition(failed: list[dict], runs: list[dict]) -> tuple[str, int]:
    """Which of `runs` fail, as a short condition, and how many runs meet it (as many as
    fail if it is exact).

    Per property the most selective candidate that every failing case meets is taken;
    then every part that does not change which runs match is dropped.
    """
    def matching(chosen):
        return {id(r) for r in runs if all(f(r) for _, f in chosen)}

    chosen = []
    for preds in _predicates(failed, runs):
        ok = [c for c in preds if all(c[1](r) for r in failed)]
        chosen.append(min(ok, key=lambda c: sum(1 for r in runs if c[1](r))))  # first on ties
    target = matching(chosen)
    for c in list(chosen):
        fewer = [x for x in chosen if x is not c]
        if matching(fewer) == target:
            chosen = fewer
    return " and ".join(text for text, _ in chosen if text), len(target)


def verify(
    collectives: Iterable[str] | None = None,
    algorithms: Iterable[str] | None = None,
    ps: Iterable[int] = range(1, 10),
    dists: Iterable[str] | None = None,
    bs: Iterable[int] = DEFAULT_B,
    roots: Iterable[int | str] | None = None,
    seed: int = 0,
    backend: Backend | None = None,
    progress: bool = False,
    stall_limit: float | None = None,
    types: Iterable[str] | None = None,
    ops: Iterable[str] | None = None,
    groups=None,
) -> VerifyReport:
    """Compare kernels with the MPI library's collectives on real MPI ranks.

    Parameters
    ----------
    collectives : str or iterable of str, optional
        Collectives to check (default: all); a string is one name (or ``"a,b"``).
    algorithms : str or iterable of str, optional
        Algorithm names (default: every registered one, ``native`` included); a string is
        one name (or ``"a,b"``).
    ps : iterable of int
        Process counts.
    dists : iterable of str, optional
        Block-size distributions (default: all).
    bs : iterable of int
        Average block sizes ``b``.
    roots : iterable of int or str, optional
        Roots (default: 0, p/2 and p-1): numbers, or ``"p/2"`` and ``"p-K"`` resolved for
        every p (``[0, "p-1"]``: the first and the last rank).
    seed : int
        Seed of the random distributions and data.
    backend : callable, optional
        Where to run (default: fresh ranks under mpiexec, one run with ``max(ps)`` ranks).
    progress : bool
        Show a progress bar.
    stall_limit : float, optional
        Seconds without progress after which an mpiexec run is stopped as hung, naming
        the ranks that stopped responding (default :data:`tuwviz.run.launch.STALL_LIMIT`).
    types : str or iterable of str, optional
        Datatype pairs (:data:`tuwviz.run.typepairs.PAIRS`; default: every pair that applies
        to the collective).  ``"same"`` alone is the sweep with one datatype.
    groups : str or iterable, optional
        Two-group sizes (``"5,2"`` or ``[(5, 2), (2, 5)]``): Allgather and Allgatherv on an
        inter-communicator of group A (p processes) and B (q), against the library's
        intergroup collective (:func:`parse_groups`); `ps` is then not used.
    ops : str or iterable of str, optional
        ``"datatype:op[:data]"`` the reductions run with (default
        :data:`tuwviz.problems.REDUCTION_TYPES`: sum, max, min on int and double, bor on
        byte, a user-defined sum on int, and sum on random doubles, compared with the
        tolerance :data:`tuwviz.problems.RANDOM_SUM_TOLERANCE`).  Other collectives move
        ints.

    Returns
    -------
    VerifyReport

    Raises
    ------
    ValueError
        Before anything runs, for a bad or empty selection: unknown names, p outside
        ``1..`` :func:`tuwviz.config.max_ranks`, a negative or non-integer b,
        roots out of range or given for collectives without a root.
    RankFailure
        A rank died, raised or hung: the message names the case that was running, how
        the rank ended and its last output; the exception's ``report`` attribute is the
        :class:`VerifyReport` of the cases finished before it (``aborted`` set).
    """
    if backend is None and groups is None:  # before building cases: range(1, 10**7) fails at once
        check_ranks(max(int_values("ps", ps, lo=1, hi=config.max_ranks(), hint=RANKS_HINT)))
    elif backend is None:
        check_groups_fit(groups)
    # a backend that cannot run every case (SMPI's: one datatype, small integers) says so
    limits = getattr(backend, "case_defaults", {})
    if types is None and "types" in limits:
        types = limits["types"]
    if ops is None and "data" in limits and groups is None:  # two groups have no operators
        ops = [t for t, (_, _, data) in zip(REDUCTION_TYPES, parse_reduction_types(REDUCTION_TYPES))
               if data in limits["data"]]
    cases = verify_cases(collectives, algorithms, ps, dists, bs, roots, seed, types, ops, groups)
    if backend is None:
        backend = mpiexec_backend(stall_limit)
    return run_verify(cases, backend, progress)


def run_verify(cases: list[dict], backend: Backend | None = None, progress: bool = False,
               stall_limit: float | None = None, also: Sequence[dict] = (),
               on_also: Callable[[int, dict, object], None] | None = None) -> VerifyReport:
    """Run verification cases (as :func:`verify_cases` makes them) and report each.

    The seam for sweeps other than verify's own, e.g. the course grader's
    (:mod:`tuwviz.course.grade`): any list of ``mode="verify"`` cases, with ``problem`` of any
    datatype and optional ``types`` pairs.  `backend`, `progress` and `stall_limit` are
    :func:`verify`'s; the errors too (a :class:`RankFailure` carries the report so far).

    `also` are cases of another mode (e.g. :func:`tuwviz.run.trace.trace_cases`), run in the
    same job after the verify cases, each result handed to ``on_also(i, case, result)``:
    one MPI launch checks a kernel and records its messages.  If they fail, the report so
    far is complete (``len(report.results) == len(cases)``).
    """
    if not cases:
        raise ValueError("empty selection: nothing to verify")
    jobs = [*cases, *also]
    if also and on_also is None:
        raise ValueError("cases in `also` need on_also to receive their results")
    if backend is None:
        check_ranks(max(case_ranks(c["problem"]) for c in jobs))
        backend = mpiexec_backend(stall_limit)
    record_launch("verify", len(cases))  # the test suite's budget counts cases too
    report = VerifyReport(library=getattr(backend, "library", "the MPI library"))
    from tqdm.auto import tqdm

    bar = tqdm(total=len(cases), desc="verify", disable=not progress, unit="case")

    def on_result(i, case, result):
        if i >= len(cases):
            on_also(i - len(cases), case, result)
            return
        pr = case["problem"]
        report.results.append({
            "collective": pr["collective"], "algorithm": case["algorithm"], "p": pr["p"],
            "root": pr["root"], "distribution": pr["distribution"], "b": pr["b"],
            "m": sum(pr["counts"]), "params": label(case.get("params")),
            "types": case.get("types", "same"), "datatype": pr.get("datatype", "int"),
            "op": pr.get("op", "sum"), "data": case.get("data", "small"), **result,
        })
        if pr.get("q"):
            report.results[-1].update(q=pr["q"], b_b=pr.get("b_b"))
        bar.update()

    try:
        backend(max(case_ranks(c["problem"]) for c in jobs), jobs, on_result)
    except TuwvizError as exc:
        # the cases finished before it stay available: the CLI prints them, a notebook
        # finds them on the exception
        if isinstance(exc, RankFailure):
            report.aborted = exc
        exc.report = report
        raise
    finally:
        bar.close()
    return report
