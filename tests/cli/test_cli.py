"""The tuwviz command line: help, tables, JSON, one-line errors."""
import json
import subprocess
import sys
from pathlib import Path

import tuwviz.cli
from support import hang_guard
from tuwviz.cli import build_parser


def test_help_lists_the_commands(cli):
    r = cli("--help")
    assert r.returncode == 0
    for cmd in ("verify", "bench", "model", "lab", "list"):
        assert cmd in r.stdout
    for cmd in ("verify", "bench", "model", "lab", "list"):
        sub = cli(cmd, "--help")
        assert sub.returncode == 0 and "--json" in sub.stdout


def test_help_examples_keep_their_continuation_lines(cli):
    lines = cli("--help").stdout.splitlines()
    # each wrapped example stays two lines: the first ends in the shell's backslash
    at = next(i for i, l in enumerate(lines) if "--dist broadcast,spike,regular" in l)
    assert lines[at].endswith(" \\") and "--algorithms" not in lines[at]
    assert lines[at + 1].startswith("      --algorithms native,ring,pipelined")
    assert not [l for l in lines if "   --" in l.strip()], "a continuation collapsed into spaces"


def test_every_option_has_help_that_fits_it():
    subparsers = next(a for a in build_parser()._actions if a.dest == "command").choices
    for name, sp in subparsers.items():
        for action in sp._actions:
            assert action.help, f"tuwviz {name} {action.option_strings or action.dest}: no help"
    # lab prints its command, not a table
    (lab_json,) = [a for a in subparsers["lab"]._actions if "--json" in a.option_strings]
    assert "command" in lab_json.help and "table" not in lab_json.help


def test_list_table_and_json(cli):
    r = cli("list")
    assert r.returncode == 0 and "reduce_scatter_block" in r.stdout and "linear" in r.stdout
    rows = json.loads(cli("list", "--collective", "gatherv", "--json").stdout)
    assert [(x["algorithm"], x["model"]) for x in rows] == [
        ("native", "-"), ("linear", "yes"), ("binomial", "yes"), ("tuw", "yes"), ("circulant", "yes")]


def test_model_prints_schedule_and_prediction(cli):
    r = cli("model", "gatherv", "linear", "--np", "4", "--b", "10", "--root", "3",
            "--alpha", "1e-6", "--beta", "1e-9")
    assert r.returncode == 0
    assert "recv 0 (40 B), recv 1 (40 B), recv 2 (40 B)" in r.stdout
    assert "model prediction: 3.120 µs" in r.stdout
    out = json.loads(cli("model", "gatherv", "--counts", "4,0,2", "--root", "0", "--json").stdout)
    assert [e["schedule"]["algorithm"] for e in out] == ["linear", "binomial", "tuw", "circulant"]
    entry = out[0]
    assert entry["label"] == "model"
    # rank 1 has an empty block: it sends nothing, so the root receives once
    assert entry["prediction"]["time"] == 1e-6 + 8e-9


def test_model_report_fits_the_terminal_width(cli):
    args = ("model", "allgatherv", "pipelined", "--np", "30", "--dist", "broadcast", "--b",
            "33554432", "--datatype", "byte", "--block-bytes", "1048576")
    wide = cli(*args).stdout  # not a terminal, no COLUMNS: full lines, as for a file
    assert max(len(l) for l in wide.splitlines()) > 200
    for columns in (100, 60):
        r = cli(*args, env={"COLUMNS": str(columns)})
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert max(len(l) for l in lines) <= columns, [l for l in lines if len(l) > columns]
        # still every rank, its finish time and the prediction
        assert sum(1 for l in lines if l.split()[:1] and l.split()[0].isdigit()) == 30
        assert "33586.432" in r.stdout and "model prediction: 62974.560 µs" in r.stdout


def test_model_bad_input(cli):
    r = cli("model", "gatherv", "linear", "--counts", "1,-2,3")
    assert r.returncode == 2 and r.stderr.strip() == "error: --counts must be at least 0, got -2"
    r = cli("model", "gatherv", "linear", "--np", "4", "--root", "9")
    assert r.returncode == 2 and "root 9 out of range 0..3" in r.stderr
    r = cli("model", "gatherv", "tree")
    assert r.returncode == 2 and "models exist for: linear" in r.stderr
    r = cli("model", "gatherz")
    assert r.returncode == 2 and "valid collectives:" in r.stderr
    # a tuning parameter the algorithm does not take is an error, not silently dropped
    r = cli("model", "gatherv", "tuw", "--np", "4", "--block-bytes", "5")
    assert r.returncode == 2 and r.stderr.strip() == \
        "error: gatherv/tuw takes no parameters, got: block_bytes"
    r = cli("model", "gatherv", "--np", "4", "--ring", "smp")
    assert r.returncode == 2 and r.stderr.strip() == \
        "error: no gatherv algorithm takes the parameter ring"
    r = cli("model", "allgatherv", "--np", "4", "--b", "10", "--block-bytes", "8")
    assert r.returncode == 0 and "model allgatherv/pipelined" in r.stdout  # taken by one


def test_lab_binds_loopback_with_token(cli):
    cmd = json.loads(cli("lab", "--json").stdout)["command"]
    assert "--ServerApp.ip=127.0.0.1" in cmd
    assert not any("token" in c for c in cmd)  # JupyterLab's default: a random token


def test_bench_table_has_a_root_column_only_for_rooted_collectives(cli):
    def header(collective):
        r = cli("bench", collective, "--np", "2", "--b", "1", "--reps", "2", "--warmup", "0",
                "--no-progress")
        assert r.returncode == 0, r.stderr
        return r.stdout.splitlines()[0].split()

    assert "root" not in header("allgatherv") and "distribution" in header("allgatherv")
    assert "root" in header("gatherv")


def test_no_mpi_compiler_is_a_clear_error(cli, tmp_path):
    r = cli("list", env={"MPICC": "/nonexistent/mpicc", "TUWVIZ_BUILD_DIR": str(tmp_path)})
    assert r.returncode == 1
    assert r.stderr.strip() == "error: MPICC=/nonexistent/mpicc is not an executable compiler"
    r = cli("verify", "--np", "2", env={"MPIEXEC": "/nonexistent/mpiexec"})
    assert r.returncode == 1 and "MPIEXEC=/nonexistent/mpiexec" in r.stderr


def test_lab_really_serves_on_loopback_and_requires_the_token(tmp_path):
    import glob
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time
    import urllib.error
    import urllib.request

    with socket.socket() as s:  # a free port
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    runtime = tmp_path / "runtime"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime)}
    proc = subprocess.Popen([sys.executable, "-m", "tuwviz.cli", "lab", "--port", str(port),
                             "--no-browser"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        info = None
        deadline = time.monotonic() + hang_guard(90)
        while info is None and time.monotonic() < deadline:
            files = glob.glob(str(runtime / "jpserver-*.json"))
            info = json.loads(open(files[0]).read()) if files else None
            time.sleep(0.5)
        assert info is not None, "hang guard: JupyterLab wrote no server file"
        assert info["token"] and info["port"] == port
        base = f"http://127.0.0.1:{port}/api/status"
        try:
            urllib.request.urlopen(base, timeout=hang_guard(60))
            raise AssertionError("the server answered without its token")
        except urllib.error.HTTPError as exc:
            assert exc.code == 403
        with urllib.request.urlopen(f"{base}?token={info['token']}", timeout=hang_guard(60)) as r:
            assert r.status == 200
        # the root is the repository, so the kernel sources are in Lab's file browser and
        # writable; Lab opens in notebooks/
        api = f"http://127.0.0.1:{port}/api/contents"
        with urllib.request.urlopen(f"{api}?token={info['token']}", timeout=hang_guard(60)) as r:
            names = {c["name"] for c in json.loads(r.read())["content"]}
        assert {"kernels_c", "notebooks", "tuwviz"} <= names, names
        source = f"{api}/kernels_c/gatherv/gatherv_linear.c?content=0&token={info['token']}"
        with urllib.request.urlopen(source, timeout=hang_guard(60)) as r:
            assert json.loads(r.read())["writable"] is True
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/?token={info['token']}",
                                    timeout=hang_guard(60)) as r:
            assert r.status == 200 and r.geturl().split("?")[0].endswith("/lab/tree/notebooks")
        # bound to loopback only: no listener on the machine's other addresses
        listen = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True).stdout
        assert listen.strip() and all("127.0.0.1:" in line for line in listen.strip().splitlines())
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=hang_guard(120))


def test_a_reader_that_stops_early_ends_the_command_quietly():
    # `tuwviz model ... --json | head -1`: the reader closes the pipe after one line; the
    # JSON (~1 MB) is far more than a pipe holds, so the writer is still writing then
    import subprocess
    import sys

    from support import REPO

    proc = subprocess.Popen([sys.executable, "-m", "tuwviz.cli", "model", "gatherv", "linear",
                             "--np", "5000", "--dist", "same", "--b", "1", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO)
    assert proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=hang_guard(60)) == 141  # 128 + SIGPIPE, as `head`'s writers end
    assert "Broken pipe" not in err and "Traceback" not in err, err


def test_each_command_is_one_module_and_all_are_registered():
    from tuwviz.cli import COMMANDS

    folder = Path(tuwviz.cli.__file__).parent
    assert {f"main_{name}" for name in COMMANDS} == {f.stem for f in folder.glob("main_*.py")}
    for name, module in COMMANDS.items():
        assert module.__name__ == f"tuwviz.cli.main_{name}"
        assert set(module.__all__) == {"configure_parser", "execute"}
    # the order of `tuwviz --help`; an alias names a command too (`tuwviz platform`)
    from tuwviz.cli.entry import ALIASES

    subparsers = next(a for a in build_parser()._actions if a.dest == "command").choices
    assert [ALIASES.get(n, n) for n in subparsers if n not in ALIASES] == list(COMMANDS)
    assert {n: ALIASES[n] for n in subparsers if n in ALIASES} == ALIASES


def test_the_parser_loads_none_of_the_heavy_libraries():
    # why the command modules import inside execute(): `tuwviz --help` stays quick
    code = ("import sys, tuwviz.cli\ntuwviz.cli.build_parser()\n"
            "print(sorted(m for m in ('pandas', 'bokeh', 'ipyparallel', 'mpi4py') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=hang_guard(120))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
