"""``tuwviz lab``: JupyterLab on 127.0.0.1 with a token, the repository as its root."""
from __future__ import annotations

# imports inside functions: a command imports what it runs when it runs, so `tuwviz --help`
# and the other commands start without pandas, Bokeh, ipyparallel or MPI.
import argparse
import json
import os
import shutil
import subprocess
import sys

from .. import config
from ..errors import TuwvizError
from .options import int_type

__all__ = ["configure_parser", "execute"]


def configure_parser(sub) -> argparse.ArgumentParser:
    """The ``lab`` subcommand's options."""
    sp = sub.add_parser(
        "lab", help="start JupyterLab on 127.0.0.1 (token on), showing notebooks/",
        description="Start JupyterLab bound to 127.0.0.1 with a token. Its root is the "
                    "repository, so the C kernels (kernels_c/) can be opened and edited next to "
                    "the notebooks; it opens in notebooks/. On a login node, reach it through "
                    "an SSH tunnel (ssh -L 8888:127.0.0.1:8888).",
    )
    sp.add_argument("--port", type=int_type(1, 65535), default=8888,
                    help="port, 1-65535 (default 8888)")
    sp.add_argument("--ip", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    sp.add_argument("--no-browser", action="store_true", help="do not open a browser")
    sp.add_argument("--dry-run", action="store_true", help="print the command instead of running it")
    sp.add_argument("--json", action="store_true",
                    help="print the command as JSON instead of running it")
    return sp


def execute(args) -> int:
    # the repository is the root, so kernels_c/ is in Lab's file browser, editable; Lab
    # opens in notebooks/, where a student starts
    repo = config.KERNELS_DIR.parent
    jupyter = shutil.which("jupyter", path=os.path.join(sys.prefix, "bin")) or shutil.which("jupyter")
    if jupyter is None:
        raise TuwvizError("jupyter is not installed in this environment: run 'make lab'")
    cmd = [jupyter, "lab", f"--ServerApp.ip={args.ip}", f"--ServerApp.port={args.port}",
           f"--ServerApp.root_dir={repo}", "--LabApp.default_url=/lab/tree/notebooks"]
    if args.no_browser:
        cmd.append("--no-browser")
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    if args.ip not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: JupyterLab will accept connections on {args.ip}; keep the token secret",
              file=sys.stderr)
    if args.dry_run or args.json:
        print(json.dumps({"command": cmd}) if args.json else " ".join(cmd))
        return 0
    # engines started from notebooks must find this environment's mpiexec
    env = {**os.environ, "PATH": os.pathsep.join([os.path.join(sys.prefix, "bin"), os.environ.get("PATH", "")])}
    from ..run import reaper

    proc = subprocess.Popen(cmd, env=env)
    reaper.watch(proc.pid)  # if this process is killed outright, JupyterLab and its kernels go too
    try:
        return proc.wait()
    finally:
        if proc.poll() is None:
            # SIGTERM lets JupyterLab shut its kernels down (they stop their clusters)
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        reaper.forget(proc.pid)
