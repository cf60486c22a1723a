"""The tuwviz command line: help, tables, JSON, one-line errors."""
import json


def test_help_lists_the_commands(cli):
    r = cli("--help")
    assert r.returncode == 0
    for cmd in ("verify", "bench", "model", "lab", "list"):
        assert cmd in r.stdout
    for cmd in ("verify", "bench", "model", "lab", "list"):
        sub = cli(cmd, "--help")
        assert sub.returncode == 0 and "--json" in sub.stdout


def test_list_table_and_json(cli):
    r = cli("list")
    assert r.returncode == 0 and "reduce_scatter_block" in r.stdout and "linear" in r.stdout
    rows = json.loads(cli("list", "--collective", "gatherv", "--json").stdout)
    assert [(x["algorithm"], x["model"]) for x in rows] == [
        ("native", "-"), ("linear", "yes"), ("binomial", "yes"), ("tuw", "yes")]


def test_model_prints_schedule_and_prediction(cli):
    r = cli("model", "gatherv", "linear", "--np", "4", "--b", "10", "--root", "3",
            "--alpha", "1e-6", "--beta", "1e-9")
    assert r.returncode == 0
    assert "recv 0 (40 B), recv 1 (40 B), recv 2 (40 B)" in r.stdout
    assert "model prediction: 3.120 µs" in r.stdout
    out = json.loads(cli("model", "gatherv", "--counts", "4,0,2", "--root", "0", "--json").stdout)
    assert [e["schedule"]["algorithm"] for e in out] == ["linear", "binomial", "tuw"]
    entry = out[0]
    assert entry["label"] == "model"
    # rank 1 has an empty block: it sends nothing, so the root receives once
    assert entry["prediction"]["time"] == 1e-6 + 8e-9


def test_model_bad_input(cli):
    r = cli("model", "gatherv", "linear", "--counts", "1,-2,3")
    assert r.returncode == 2 and r.stderr.strip() == "error: negative count m_1=-2 for process 1"
    r = cli("model", "gatherv", "linear", "--np", "4", "--root", "9")
    assert r.returncode == 2 and "root 9 out of range 0..3" in r.stderr
    r = cli("model", "gatherv", "tree")
    assert r.returncode == 2 and "models exist for: linear" in r.stderr
    r = cli("model", "gatherz")
    assert r.returncode == 2 and "valid collectives:" in r.stderr


def test_lab_binds_loopback_with_token(cli):
    cmd = json.loads(cli("lab", "--json").stdout)["command"]
    assert "--ServerApp.ip=127.0.0.1" in cmd
    assert not any("token" in c for c in cmd)  # JupyterLab's default: a random token
    assert any(c.endswith("/notebooks") for c in cmd)


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
        deadline = time.monotonic() + 90
        while info is None and time.monotonic() < deadline:
            files = glob.glob(str(runtime / "jpserver-*.json"))
            info = json.loads(open(files[0]).read()) if files else None
            time.sleep(0.5)
        assert info is not None, "JupyterLab did not start"
        assert info["token"] and info["port"] == port
        base = f"http://127.0.0.1:{port}/api/status"
        try:
            urllib.request.urlopen(base, timeout=10)
            raise AssertionError("the server answered without its token")
        except urllib.error.HTTPError as exc:
            assert exc.code == 403
        with urllib.request.urlopen(f"{base}?token={info['token']}", timeout=10) as r:
            assert r.status == 200
        # bound to loopback only: no listener on the machine's other addresses
        listen = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True).stdout
        assert listen.strip() and all("127.0.0.1:" in line for line in listen.strip().splitlines())
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
