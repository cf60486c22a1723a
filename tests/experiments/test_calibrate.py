"""tuwviz calibrate: alpha, beta, gamma measured on real MPI ranks, cached per layout, and
used by bench (the pipelined ring's Eq. (2) block size) and `tuwviz model --calibrated`."""
import json

import pytest

from tuwviz.experiments import calibrate as cal_mod
from tuwviz.experiments.bench import bench, bench_cases
from tuwviz.experiments.calibrate import (GAMMA_DATATYPES, SIZES, Calibration, calibrate,
                                          fit_alpha_beta, load, load_all, local_layout)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty calibration cache of this test's own."""
    monkeypatch.setenv("TUWVIZ_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "calibration"


def _fake(ranks: int, alpha: float = 3e-4, beta: float = 5e-10) -> Calibration:
    """A calibration of this machine's layout for `ranks` ranks with chosen values."""
    lay = local_layout(ranks)
    return Calibration(alpha=alpha, beta=beta, gamma={"int": 2e-9, "double": 3e-9, "byte": 1e-9},
                       copy=1e-10, host=lay["host"], cores=lay["cores"],
                       mpi_library=lay["mpi_library"], ranks=ranks, oversubscribed=False,
                       date="2026-01-01T00:00:00+00:00", ring={8: 300.0, 4194304: 2400.0})


def test_calibrate_measures_on_real_ranks_and_caches_the_layout(cache, tmp_path, monkeypatch):
    log = tmp_path / "launches"
    monkeypatch.setenv("TUWVIZ_LAUNCH_LOG", str(log))
    c = calibrate(3, reps=10, progress=False)  # 3 ranks: one pair and an unpaired rank
    assert sorted(c.ring) == sorted(c.pingpong) == sorted(SIZES)
    assert all(t > 0 for t in [*c.ring.values(), *c.pingpong.values()])
    assert sorted(c.gamma) == sorted(GAMMA_DATATYPES) and all(g > 0 for g in c.gamma.values())
    assert c.copy > 0 and c.alpha >= 1e-9 and c.beta >= 1e-15
    # the fit is the one of the measured one-way times
    # alpha: a ring round's start-up; beta: the ping-pong's time per byte
    assert (c.alpha, c.ring_beta) == fit_alpha_beta(list(c.ring),
                                                    [t * 1e-6 for t in c.ring.values()])
    assert (c.pingpong_alpha, c.beta) == fit_alpha_beta(
        list(c.pingpong), [t * 1e-6 for t in c.pingpong.values()])
    assert [r["bytes"] for r in c.table()] == sorted(SIZES)
    assert c.ranks == 3 and c.mpi_library.startswith("MPICH")
    assert c.oversubscribed == (3 > (__import__("os").cpu_count() or 1))
    # cached under the layout the driver looks up (host, cores, MPI library, ranks)
    assert c.path and (cache / f"{c.key}.json").is_file()
    again = load(3)
    assert again is not None and again.to_dict() == c.to_dict()
    assert [x.ranks for x in load_all(local_layout(3))] == [3]
    launches = log.read_text().splitlines()
    assert launches == ["mpiexec 3"]
    assert calibrate(3, reps=10, progress=False).to_dict() == c.to_dict()  # from the cache
    assert log.read_text().splitlines() == launches  # nothing started again
    assert load(2) is None  # another layout


def test_calibrate_refuses_one_rank_and_few_reps(cache):
    with pytest.raises(ValueError, match="at least 2 ranks"):
        calibrate(1)
    with pytest.raises(ValueError, match="reps must be at least 10"):
        calibrate(2, reps=3)


def test_fit_needs_two_sizes():
    with pytest.raises(ValueError, match="at least two sizes"):
        fit_alpha_beta([8], [1e-6])
    # below 64 KiB only: the slope over all sizes
    a, b = fit_alpha_beta([8, 1024, 4096], [1e-6 + 2e-9 * s for s in (8, 1024, 4096)])
    assert a == pytest.approx(1e-6) and b == pytest.approx(2e-9)


def test_damaged_cache_file_is_named(cache):
    path = _fake(4).save()
    path.write_text("{not json")
    with pytest.raises(ValueError, match="damaged.*--np 4 --force"):
        load(4)


def test_bench_gives_the_pipelined_ring_the_calibrated_alpha_beta(cache):
    c8 = _fake(8)
    c8.save()

    def params(**kw):
        cases = bench_cases("allgatherv", ["native", "ring", "pipelined"], [4, 8], ["broadcast"],
                            [1000], reps=2, **kw)
        return {(x["algorithm"], x["problem"]["p"]): x["params"] for x in cases}

    got = params()
    assert got[("pipelined", 8)] == {"alpha": c8.alpha, "beta": c8.beta}
    assert got[("pipelined", 4)] == {}  # 4 ranks are not calibrated: the C defaults
    assert got[("ring", 8)] == {} and got[("native", 8)] == {}
    assert params(calibrated=False)[("pipelined", 8)] == {}
    # the user's values win; a fixed block size makes alpha and beta moot
    assert params(params={"alpha": [1e-5]})[("pipelined", 8)] == {"alpha": 1e-5}
    assert params(params={"block_bytes": [4096]})[("pipelined", 8)] == {"block_bytes": 4096}


def test_bench_rows_show_the_calibrated_values_and_the_model_agrees(cache, cli):
    c = _fake(3, alpha=2e-4, beta=1e-10)
    c.save()
    df = bench("allgatherv", ["ring", "pipelined"], ps=[3], dists=["broadcast"], bs=[50000],
               reps=2, progress=False)
    row = df[df["algorithm"] == "pipelined"].iloc[0]
    assert row["params"] == "alpha=0.0002 beta=1e-10"
    assert df[df["algorithm"] == "ring"].iloc[0]["params"] == ""
    # the CLI says where Eq. (2)'s values come from, before measuring
    r = cli("bench", "allgatherv", "--np", "3,4", "--algorithms", "pipelined", "--dist",
            "broadcast", "--b", "10", "--reps", "1", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "calibration of 3 ranks (alpha = 0.0002 s" in r.stderr
    assert "no calibration of 4 ranks here" in r.stderr and "calibrate --np 4" in r.stderr
    r = cli("bench", "allgatherv", "--np", "3", "--algorithms", "pipelined", "--dist",
            "broadcast", "--b", "10", "--reps", "1", "--no-progress", "--no-calibration")
    assert r.returncode == 0, r.stderr
    assert "--no-calibration" in r.stderr and "alpha=" not in r.stdout


def test_model_calibrated_simulates_with_the_cached_values(cache, cli):
    from tuwviz import model
    from tuwviz.problems import make_problem

    r = cli("model", "allgatherv", "pipelined", "--np", "8", "--dist", "broadcast", "--b",
            "100000", "--calibrated")
    assert r.returncode == 2 and "no calibration yet" in r.stderr and "tuwviz calibrate" in r.stderr
    c = _fake(8, alpha=3e-4, beta=5e-10)
    c.save()
    r = cli("model", "allgatherv", "pipelined", "--np", "8", "--dist", "broadcast", "--b",
            "100000", "--calibrated", "--json")
    assert r.returncode == 0, r.stderr
    (out,) = json.loads(r.stdout)
    assert out["cost_model"]["alpha"] == c.alpha and out["cost_model"]["gamma"] == c.gamma["int"]
    pr = make_problem("allgatherv", 8, "broadcast", 100000)
    s = model.schedule("allgatherv", "pipelined", pr, alpha=c.alpha, beta=c.beta)
    want = model.simulate(s, c.alpha, c.beta, c.gamma["int"]).time
    assert out["prediction"]["time"] == pytest.approx(want)
    # the calibrated block size differs from the defaults' (fewer, larger blocks)
    default = model.schedule("allgatherv", "pipelined", pr)
    assert sum(map(len, s.all_messages())) < sum(map(len, default.all_messages()))
    r = cli("model", "allgatherv", "pipelined", "--np", "8", "--dist", "broadcast", "--b",
            "1000", "--calibrated")
    assert r.returncode == 0 and "calibrated on 8 ranks" in r.stdout
    # another p: the latest calibration, named
    r = cli("model", "gatherv", "binomial", "--np", "5", "--calibrated")
    assert r.returncode == 0 and "calibrated on 8 ranks" in r.stdout
    r = cli("model", "gatherv", "binomial", "--np", "5", "--calibrated", "4")
    assert r.returncode == 2 and "no calibration of 4 ranks" in r.stderr
    r = cli("model", "gatherv", "binomial", "--calibrated", "--alpha", "1e-6")
    assert r.returncode == 2 and "--calibrated or --alpha, not both" in r.stderr


def test_cli_calibrate_measures_shows_and_lists(cache, cli):
    r = cli("calibrate", "--list")
    assert r.returncode == 0 and "no calibration cached" in r.stdout
    r = cli("calibrate", "--np", "1")
    assert r.returncode == 2 and "at least 2 ranks" in r.stderr
    r = cli("calibrate", "--np", "2", "--reps", "10", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "saved to" in r.stdout and "alpha =" in r.stdout and "4194304" in r.stdout
    assert "Eq. (2) block size" in r.stdout
    r = cli("calibrate", "--np", "2", "--json")
    assert r.returncode == 0, r.stderr
    (c,) = json.loads(r.stdout)
    assert c["cached"] and c["ranks"] == 2 and c["alpha"] == load(2).alpha
    r = cli("calibrate", "--list")
    assert r.returncode == 0 and "2 ranks: alpha =" in r.stdout


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TUWVIZ_CACHE", str(tmp_path))
    assert cal_mod.cache_dir() == tmp_path / "calibration"
    monkeypatch.delenv("TUWVIZ_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cal_mod.cache_dir() == tmp_path / "x" / "tuwviz" / "calibration"
