"""Benchmark sweeps on real MPI ranks: CSV layout, metadata, limits and failures."""
import csv
import os
import threading

import pandas as pd
import pytest

from tuwviz.experiments.bench import ROW_FIELDS, bench, bench_cases
from tuwviz.errors import RankFailure, TimeLimitExceeded
from tuwviz.run.launch import run_mpiexec


def test_cli_bench_writes_the_documented_csv(cli, tmp_path):
    out = tmp_path / "r.csv"
    r = cli("bench", "gatherv", "--np", "4", "--dist", "same", "--b", "1,100,10000",
            "--algorithms", "native,linear", "--out", str(out), "--reps", "20", "--no-progress")
    assert r.returncode == 0, r.stderr
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ROW_FIELDS
    assert [(x["algorithm"], int(x["b"])) for x in rows] == [
        ("native", 1), ("linear", 1), ("native", 100), ("linear", 100), ("native", 10000), ("linear", 10000)]
    for x in rows:
        b = int(x["b"])
        assert (int(x["p"]), int(x["root"]), int(x["m"]), int(x["m_prime"])) == (4, 2, 4 * b, 4 * b)
        lo, med, mean, hi = (float(x[k]) for k in ("min_us", "median_us", "mean_us", "max_us"))
        assert 0 < lo <= med <= hi and lo <= mean <= hi
        assert int(x["reps"]) == 20 and x["ranks"] == "4" and x["datatype"] == "int"
        assert x["oversubscribed"] == str(4 > os.cpu_count())
        assert x["heavy_yield"] == ("1" if 4 > os.cpu_count() else "0")
        assert x["mpi_library"].startswith("MPICH") and x["backend"] == "mpiexec"
        assert x["git_commit"] and x["date"].startswith("20")
    native = {int(x["b"]): float(x["median_us"]) for x in rows if x["algorithm"] == "native"}
    for x in rows:
        expect = float(x["median_us"]) / native[int(x["b"])]
        assert float(x["ratio_to_native"]) == pytest.approx(expect)
    assert "linear" in r.stdout and "oversubscribed" in r.stdout


def test_cli_bench_allgatherv_rings_with_a_block_size_sweep(cli, tmp_path):
    """The issue's command, smaller: paper distributions, base counts, B as a parameter."""
    out = tmp_path / "ag.csv"
    r = cli("bench", "allgatherv", "--np", "4", "--dist", "broadcast,spike,regular",
            "--b", "1000,100000", "--algorithms", "native,ring,pipelined",
            "--block-bytes", "0,65536", "--reps", "3", "--warmup", "1", "--out", str(out),
            "--no-progress")
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out, keep_default_na=False)
    assert len(df) == 3 * 2 * 4  # per problem: native, ring, pipelined with two B
    first = df[(df.distribution == "broadcast") & (df.b == 1000)]
    assert list(zip(first.algorithm, first.params)) == [
        ("native", ""), ("ring", ""), ("pipelined", "block_bytes=0"),
        ("pipelined", "block_bytes=65536")]
    # the paper's totals: broadcast and spike m = c, regular m = pc
    assert set(df[df.distribution == "broadcast"].m) == {1000, 100000}
    assert set(df[df.distribution == "spike"].m) == {1000, 100000}
    assert set(df[df.distribution == "regular"].m) == {4000, 400000}
    assert (df.ratio_to_native.astype(float) > 0).all()
    assert "block_bytes=65536" in r.stdout


def test_rows_are_appended_and_other_layouts_refused(tmp_path):
    out = tmp_path / "r.csv"
    bench("gatherv", ["native"], ps=[2], bs=[1], reps=3, warmup=1, out=out, progress=False)
    bench("gatherv", ["linear"], ps=[2], bs=[1], reps=3, warmup=1, out=out, progress=False)
    assert list(pd.read_csv(out)["algorithm"]) == ["native", "linear"]
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(Exception, match="exists with other columns"):
        bench("gatherv", ["native"], ps=[2], bs=[1], reps=3, out=other, progress=False)


def test_a_file_from_before_the_slurm_columns_is_appended_to(tmp_path):
    """Results CSVs written before ``slurm_job`` and ``nodes`` existed take new rows
    without them; the header stays the file's own."""
    from tuwviz.experiments.bench import LATER_FIELDS, ROW_FIELDS

    old = [f for f in ROW_FIELDS if f not in LATER_FIELDS]
    out = tmp_path / "old.csv"
    out.write_text(",".join(old) + "\n")
    bench("gatherv", ["native"], ps=[2], bs=[1], reps=3, warmup=1, out=out, progress=False)
    rows = pd.read_csv(out)
    assert list(rows.columns) == old and list(rows["algorithm"]) == ["native"]
    assert rows["backend"][0] == "mpiexec"


def test_time_limit_stops_the_sweep_and_keeps_earlier_rows(tmp_path):
    out = tmp_path / "r.csv"
    # b=1 finishes far inside the limit (about 0.1 s; 50 times slower on a loaded machine is
    # still inside); 40 MB blocks x 2000 repetitions take 20 s or more on any machine
    with pytest.raises(TimeLimitExceeded, match="time limit of 5.0 s exceeded after"):
        bench("gatherv", ["linear"], ps=[2], bs=[1, 10_000_000], reps=2000, warmup=1,
              time_limit=5.0, out=out, progress=False)
    rows = pd.read_csv(out)
    assert list(rows["b"]) == [1] and rows["reps"][0] == 2000


def test_cli_time_limit_is_a_one_line_error(cli, tmp_path):
    r = cli("bench", "gatherv", "--np", "2", "--b", "1000000", "--reps", "5000",
            "--time-limit", "0.2", "--no-progress", "--out", str(tmp_path / "r.csv"))
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1].startswith("error: ")
    assert "time limit" in r.stderr


# on 12 ranks mpiexec.gforker takes about 12 s to say how they ended (a second per rank
# it ends), past the launch's base grace of 10 s: the grace grows with the ranks
@pytest.mark.parametrize("p, after", [(3, 1.5), pytest.param(12, 5.0, marks=pytest.mark.full)])
def test_a_rank_killed_mid_sweep_is_named_and_rows_survive(tmp_path, p, after):
    out = tmp_path / "r.csv"
    timers = []

    def killing_backend(nranks, cases, on_result, on_start=None):
        def start(infos):
            on_start(infos)
            pid = infos[1]["pid"]
            timers.append(threading.Timer(after, os.kill, (pid, 9)))
            timers[-1].start()
        return run_mpiexec(nranks, cases, on_result, on_start=start)

    with pytest.raises(RankFailure, match=r"rank 1 died") as info:
        bench("gatherv", ["native", "linear"], ps=[p], bs=[1, 10, 100, 1000] * 20, reps=400,
              warmup=1, out=out, backend=killing_backend, progress=False, rounds=1)
    assert info.value.rank == 1
    kept = pd.read_csv(out)
    assert 0 < len(kept) < 160 and list(kept.columns) == ROW_FIELDS
    # the error says how the rank ended and which case was running: the first without a row
    assert info.value.how == "killed by signal SIGKILL (Killed)"
    case = info.value.case
    assert case["index"] == len(kept) and (case["collective"], case["p"]) == ("gatherv", p)
    assert f"running: gatherv/{case['algorithm']} p={p} root={p // 2}" in str(info.value)
    assert info.value.output_from == "rank 1"


def test_interleaved_rounds_alternate_the_algorithms_and_make_one_row_each(tmp_path):
    # one burst of load used to skew a whole cell: each algorithm's repetitions ran as a
    # block.  Rounds make them take turns; the rows are still one per measurement.
    cases = bench_cases("gatherv", ["linear", "native"], [2], ["same"], [1, 100], reps=7,
                        warmup=3, rounds=3)
    first = [(c["algorithm"], c["part"], c["reps"], c["warmup"]) for c in cases[:6]]
    assert first == [("native", [0, 3], 3, 3), ("linear", [0, 3], 3, 3),
                     ("native", [1, 3], 2, 1), ("linear", [1, 3], 2, 1),
                     ("native", [2, 3], 2, 1), ("linear", [2, 3], 2, 1)]
    assert {c["problem"]["b"] for c in cases[:6]} == {1} and len(cases) == 12
    out = tmp_path / "r.csv"
    df = bench("gatherv", ["native", "linear"], ps=[2], bs=[1, 100], reps=7, warmup=3,
               rounds=3, out=out, progress=False, samples=True)
    assert list(zip(df["algorithm"], df["b"])) == [("native", 1), ("linear", 1),
                                                  ("native", 100), ("linear", 100)]
    assert list(df["reps"]) == [7] * 4 and list(df["rounds"]) == [3] * 4
    for _, row in df.iterrows():  # the statistics are those of all rounds' repetitions
        us = row["samples_us"]
        assert len(us) == 7 and row["min_us"] == min(us) and row["max_us"] == max(us)
    saved = pd.read_csv(out)
    assert list(saved["rounds"]) == [3] * 4 and list(saved["reps"]) == [7] * 4
    # blocked, as before: one round
    assert list(bench("gatherv", ["native"], ps=[2], bs=[1], reps=4, rounds=1,
                      progress=False)["rounds"]) == [1]
    with pytest.raises(ValueError, match=r"rounds \(5\) cannot exceed reps \(4\)"):
        bench("gatherv", ["native"], ps=[2], bs=[1], reps=4, rounds=5, progress=False)


def test_osu_statistic_averages_each_rank_first(tmp_path, cli):
    # OSU's "Avg Latency" averages every rank over its iterations, then over the ranks.
    # Each rank's mean is at most the mean of the per-repetition maxima (the slowest rank's
    # times, samples_us), so OSU's max over ranks can never exceed that mean, where
    # tuwviz's own max (the slowest repetition) never falls below it.
    for rounds in (1, 2):  # rounds join every rank's times
        df = bench("gather", ["native", "binomial"], ps=[3], bs=[1, 1000], reps=6, rounds=rounds,
                   statistic="osu", samples=True, progress=False, root=0)
        assert list(df["statistic"]) == ["osu"] * 4 and list(df["reps"]) == [6] * 4
        for _, row in df.iterrows():
            assert len(row["samples_us"]) == 6
            assert row["min_us"] <= row["median_us"] <= row["max_us"]
            assert row["min_us"] <= row["mean_us"] <= row["max_us"]
            assert row["max_us"] <= sum(row["samples_us"]) / 6 * (1 + 1e-12)
    slow = bench("gather", ["native"], ps=[3], bs=[1000], reps=6, samples=True, progress=False)
    assert list(slow["statistic"]) == ["slowest"]
    assert slow.iloc[0]["max_us"] == max(slow.iloc[0]["samples_us"])
    r = cli("bench", "gather", "--np", "2", "--b", "10", "--reps", "2", "--statistic", "osu",
            "--no-progress", "--out", str(tmp_path / "o.csv"))
    assert r.returncode == 0, r.stderr
    assert "statistic osu" in r.stdout and pd.read_csv(tmp_path / "o.csv")["statistic"].tolist() == ["osu"]
    r = cli("bench", "gather", "--statistic", "mean")
    assert r.returncode == 2 and "invalid choice: 'mean'" in r.stderr
    r = cli("bench", "--study", "circulant", "--statistic", "osu")
    assert r.returncode == 2 and "--statistic: a study summarizes as its paper" in r.stderr
    with pytest.raises(ValueError, match="unknown statistic 'avg'; valid statistics: slowest, osu"):
        bench_cases("gather", ["native"], [2], statistic="avg")


def test_bench_bad_input(cli):
    r = cli("bench", "gatherv", "--algorithms", "native,bogus")
    assert r.returncode == 2 and "valid algorithms: native, linear" in r.stderr
    r = cli("bench", "gatherv", "--np", "4", "--root", "4")
    assert r.returncode == 2 and "root 4 out of range 0..3" in r.stderr
    r = cli("bench", "gatherv", "--b=-3")
    assert r.returncode == 2 and "--b must be at least 0, got -3" in r.stderr
    r = cli("bench", "gatherv", "--dist", "lumpy")
    assert r.returncode == 2 and "valid distributions" in r.stderr
    r = cli("bench", "gatherv", "--np", "65")
    assert r.returncode == 2 and "--np must be at most 64, got 65" in r.stderr
    r = cli("bench", "gatherv", "--reps", "0")
    assert r.returncode == 2 and "--reps: must be at least 1" in r.stderr
    r = cli("bench", "gatherv", "--rounds", "0")
    assert r.returncode == 2 and "--rounds: must be at least 1" in r.stderr
    r = cli("bench", "gatherv", "--reps", "3", "--rounds", "4")
    assert r.returncode == 2 and "rounds (4) cannot exceed reps (3)" in r.stderr
