"""``tuwviz model``: a model schedule and its alpha-beta-gamma prediction (not a measurement)."""
from __future__ import annotations

# imports inside functions: a command imports what it runs when it runs, so `tuwviz --help`
# and the other commands start without pandas, Bokeh, ipyparallel or MPI.
import argparse
import json
import shutil
import textwrap

from .. import config
from .options import cost_type, distributions, int_type, json_option, param_grid, params_help

__all__ = ["configure_parser", "execute"]


def configure_parser(sub) -> argparse.ArgumentParser:
    """The ``model`` subcommand's options."""
    dists = distributions()
    sp = sub.add_parser(
        "model", help="print a model schedule and its alpha-beta-gamma prediction",
        description="Build the per-rank programs of an algorithm (the same rules as its C kernel) "
                    "and simulate them in the one-ported, bidirectional alpha-beta-gamma model. "
                    "Results are model predictions, not measurements.",
    )
    sp.add_argument("collective", help="the collective, e.g. gatherv")
    sp.add_argument("algorithm", nargs="?", help="algorithm (default: every modelled one)")
    sp.add_argument("--np", type=int_type(1), help="number of processes p (default 8)")
    sp.add_argument("--groups", metavar="P,Q",
                    help="two groups instead of --np (allgather, allgatherv on an "
                         "inter-communicator): A of P processes, B of Q, e.g. --groups 50,14; "
                         "also prints the intergroup paper's bounds")
    sp.add_argument("--b-b", type=int_type(0), metavar="B",
                    help="with --groups: group B's block size b (default: --b)")
    sp.add_argument("--root", type=int_type(0), help="root (default p/2)")
    sp.add_argument("--dist", default="same", help=f"distribution ({dists})")
    sp.add_argument("--b", type=int_type(0), default=100,
                    help="average block size b in elements (default 100)")
    sp.add_argument("--counts", help="explicit block sizes m_0,...,m_{p-1} instead of --dist/--b")
    sp.add_argument("--datatype", default="int", help="element type: byte, int, double")
    sp.add_argument("--op", help="the reductions' operator (default sum, bor for --datatype "
                                 "byte)")
    params_help(sp, grid=False, skip=("alpha", "beta"))
    sp.add_argument("--alpha", type=cost_type, help="latency per message, s (default 1e-6)")
    sp.add_argument("--beta", type=cost_type, help="time per byte, s (default 1e-9)")
    sp.add_argument("--gamma", type=cost_type, help="time per reduced element, s (default 0)")
    sp.add_argument("--calibrated", nargs="?", const=0, type=int_type(2), metavar="RANKS",
                    help="simulate with this machine's alpha, beta, gamma from 'tuwviz "
                         "calibrate' (of RANKS ranks; default: --np's if cached, else the "
                         "latest), also for the pipelined ring's Eq. (2); not with "
                         "--alpha/--beta/--gamma")
    sp.add_argument("--platform", metavar="NAME",
                    help="the node-aware model on a platform of 'tuwviz platforms' (or a "
                         "platform .toml): ranks on its nodes, its latencies and bandwidths "
                         "inside and between nodes, one network port per node")
    sp.add_argument("--ppn", type=int_type(1), metavar="N",
                    help="with --platform: N processes per node (default: one per core)")
    sp.add_argument("--no-one-port", action="store_true",
                    help="with --platform: let a node's processes use the network at once "
                         "(default: one port per node, shared)")
    sp.add_argument("--seed", type=int_type(0), default=0,
                    help="seed for the random block sizes of --dist random and spikes "
                         "(default 0)")
    # the setting is read when the command runs: a bad one fails `tuwviz model`, not all
    sp.add_argument("--max-messages", type=int_type(1),
                    help=f"refuse schedules estimated to have more messages (default "
                         f"{config.DEFAULT_MAX_MODEL_MESSAGES:,}, or TUWVIZ_MAX_MODEL_MESSAGES)")
    json_option(sp)
    return sp


def execute(args) -> int:
    from .. import model
    from ..model import intergroup_cost
    from ..collectives import collective
    from ..problems import Problem, default_op, make_problem

    if args.max_messages is None:
        args.max_messages = config.max_model_messages()
    info = collective(args.collective)
    if args.root is not None and not info.rooted:
        raise ValueError(f"--root: {info.name} has no root")
    groups = _model_groups(args, info.name)
    if args.algorithm is not None:  # before any problem is built
        model.check_algorithm(info.name, args.algorithm, "intra" if groups is None else "inter")
    if args.counts is not None:
        from ..experiments.sweep import parse_int_list

        counts = parse_int_list(args.counts, name="--counts", lo=0,
                                max_values=args.max_messages + 1)
        p = len(counts)
        root = (p // 2 if info.rooted else 0) if args.root is None else args.root
        if root >= p:
            raise ValueError(f"--root: root {root} out of range 0..{p - 1} for the {p} --counts")
        problem = Problem(info.name, p, root, counts, datatype=args.datatype,
                          op=args.op or default_op(args.datatype))
    elif groups is not None:
        problem = make_problem(info.name, groups[0], args.dist, args.b, seed=args.seed,
                               datatype=args.datatype, q=groups[1], b_b=args.b_b)
    else:
        args.np = 8 if args.np is None else args.np
        if args.np - 1 > args.max_messages:  # every model sends at least p - 1 messages
            raise ValueError(
                f"--np {args.np}: a model on p={args.np} needs at least {args.np - 1:,} "
                f"messages, above the bound of {args.max_messages:,}; raise it with "
                f"--max-messages")
        problem = make_problem(info.name, args.np, args.dist, args.b, root=args.root,
                               seed=args.seed, datatype=args.datatype,
                               op=args.op or default_op(args.datatype))
    grid = {k: v[0] for k, v in param_grid(args).items()}
    network = _model_network(args, problem.size)
    cal = _model_cost(args, problem.size)
    gamma_note = ""
    if network is not None:
        args.alpha, args.beta = network.inter
        gamma_note = network.describe()
    if cal is not None:
        args.alpha, args.beta = cal.alpha, cal.beta
        args.gamma = cal.gamma_for(problem.datatype)
        gamma_note = (f"cost model calibrated on {cal.where()} ({cal.date}): alpha = "
                      f"{cal.alpha:.3g} s, beta = {cal.beta:.3g} s/B, gamma = {args.gamma:.3g} "
                      f"s per {problem.datatype} element")
    # calibrated alpha, beta also set Eq. (2)'s block size, as bench gives them
    out = model.simulate_algorithms(problem, args.algorithm, grid, alpha=args.alpha,
                                    beta=args.beta, gamma=args.gamma,
                                    cost_params=cal is not None or network is not None,
                                    max_messages=args.max_messages, network=network)
    bounds = intergroup_cost.bounds(problem) if groups is not None else None
    if args.json:
        rows = [{"schedule": s.to_dict(), "prediction": r.to_dict(), "label": "model",
                 "cost_model": {"alpha": args.alpha, "beta": args.beta, "gamma": args.gamma,
                                "calibration": cal.to_dict() if cal is not None else None,
                                "network": network.to_dict() if network is not None else None}}
                for s, r in out]
        if bounds is not None:
            for row in rows:
                row["bounds_bytes"] = bounds
        print(json.dumps(rows, indent=2))
    else:
        # fit the terminal (or COLUMNS); piped into a file, lines keep their full length
        width = shutil.get_terminal_size((0, 0)).columns or None
        if gamma_note:
            print(textwrap.fill(gamma_note, width or 10**6) + "\n")
        print("\n\n".join(model.format_report(s, r, width=width) for s, r in out))
        if bounds is not None:
            print("\nThe intergroup paper's transfer terms for this problem (bytes; times "
                  f"beta = {args.beta:g} s/B):")
            for name, value in bounds.items():
                print(f"  {name:<26} {value:,.2f}" if isinstance(value, float)
                      else f"  {name:<26} {value:,}")
    return 0


def _model_network(args, ranks: int):
    """The node-aware model's network for --platform (None without it)."""
    if args.platform is None:
        if args.ppn is not None or args.no_one_port:
            raise ValueError("--ppn and --no-one-port are for --platform")
        return None
    given = [o for o, v in (("--alpha", args.alpha), ("--beta", args.beta),
                            ("--calibrated", args.calibrated)) if v is not None]
    if given:
        raise ValueError(f"--platform sets the costs; leave out {', '.join(given)}")
    from ..model.nodes import NodeNetwork

    return NodeNetwork.from_platform(args.platform, ranks, ppn=args.ppn,
                                     one_port=not args.no_one_port)


def _model_cost(args, ranks: int):
    """The calibration `tuwviz model --calibrated` simulates with (None without the flag);
    fills in the C defaults of --alpha, --beta, --gamma otherwise."""
    from ..params import DEFAULT_ALPHA, DEFAULT_BETA

    if args.calibrated is None:
        args.alpha = DEFAULT_ALPHA if args.alpha is None else args.alpha
        args.beta = DEFAULT_BETA if args.beta is None else args.beta
        args.gamma = 0.0 if args.gamma is None else args.gamma
        return None
    given = [f"--{k}" for k in ("alpha", "beta", "gamma") if getattr(args, k) is not None]
    if given:
        raise ValueError(f"give --calibrated or {given[0]}, not both")
    from ..experiments.calibrate import load, load_all, local_layout

    layout = local_layout(ranks)
    if args.calibrated:
        cal = load(args.calibrated, {**layout, "ranks": args.calibrated})
        if cal is None:
            raise ValueError(f"--calibrated {args.calibrated}: no calibration of "
                             f"{args.calibrated} ranks here; run 'tuwviz calibrate --np "
                             f"{args.calibrated}'")
        return cal
    cal = load(ranks, layout)
    if cal is None:
        every = load_all(layout)
        if not every:
            raise ValueError("--calibrated: this machine has no calibration yet; run "
                             "'tuwviz calibrate' (or 'tuwviz calibrate --np N' for N ranks)")
        cal = max(every, key=lambda c: c.date)
    return cal


def _model_groups(args, collective_name: str) -> tuple[int, int] | None:
    """--groups for `tuwviz model`: one pair, the model's own bound on its size."""
    if args.groups is None:
        if args.b_b is not None:
            raise ValueError("--b-b (group B's block size) needs --groups P,Q")
        return None
    from ..problems import INTERGROUP_COLLECTIVES
    from ..experiments.sweep import parse_groups

    if args.np is not None or args.counts is not None or args.root is not None:
        raise ValueError("give --groups P,Q or --np/--counts/--root, not both")
    if collective_name not in INTERGROUP_COLLECTIVES:
        raise ValueError(f"--groups is for {', '.join(INTERGROUP_COLLECTIVES)} (on an "
                         f"inter-communicator), not {collective_name}")
    (pair,) = parse_groups(args.groups, max_total=args.max_messages)
    return pair
