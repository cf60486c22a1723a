"""Tests of tuwviz.run.watch: a paused machine is not a stopped rank.

A virtual machine that the host pauses (this CI machine was, for 30-40 s; the kernel
logged "workqueue lockup") resumes with its clock moved on: every rank then looks silent.
Real processes here: a driver with a RankWatch and a rank that beats, stopped and resumed
with SIGSTOP/SIGCONT.
"""
import os
import signal
import subprocess
import sys
import textwrap
import time

from support import REPO, hang_guard

DRIVER = textwrap.dedent("""
    import sys, time
    from tuwviz.run import watch
    watch.FROZEN = 1.0
    limit = float(sys.argv[1])
    w = watch.RankWatch()
    print(w.address, flush=True)
    connected = False
    while True:
        if not connected and w.silent(0):  # the rank said who it is
            connected = True
            print("connected", flush=True)
        elif connected and w.silent(limit):
            print("silent", w.silent(limit), flush=True)
        time.sleep(0.1)
""")
RANK = "import sys, time; from tuwviz.run import watch; watch.connect(7, sys.argv[1]); time.sleep(600)"


def _start(code, *args):
    return subprocess.Popen([sys.executable, "-c", code, *map(str, args)], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                            start_new_session=True)


def _pair(limit):
    driver = _start(DRIVER, limit)
    rank = _start(RANK, driver.stdout.readline().strip())
    assert driver.stdout.readline() == "connected\n"
    return driver, rank


def _lines_until_quiet(driver):
    driver.kill()
    return driver.stdout.read()


def test_a_paused_machine_blames_no_rank_and_a_stopped_rank_is_still_named():
    limit = hang_guard(3)
    paused, alone = _pair(limit), _pair(limit)
    procs = [*paused, *alone]
    try:
        time.sleep(1.2)  # both ranks beating
        # the whole "machine" (driver and rank) stops for longer than the limit ...
        for p in paused:
            p.send_signal(signal.SIGSTOP)
        # ... and, beside it, only a rank stops: that one must still be named
        alone[1].send_signal(signal.SIGSTOP)
        time.sleep(limit + 1)
        paused[0].send_signal(signal.SIGCONT)  # the driver runs first: it sees the rank's
        time.sleep(1)                          # silence before any beat can arrive
        paused[1].send_signal(signal.SIGCONT)
        line = alone[0].stdout.readline()  # hang guard: the test's own time-out
        assert line.startswith("silent [7]")
        time.sleep(1)  # without the pause noticed, "silent" came at once
        assert _lines_until_quiet(paused[0]) == ""
    finally:
        for p in procs:
            p.send_signal(signal.SIGCONT)
            p.kill()
            p.wait()


def test_a_rank_killed_by_a_fatal_signal_names_it_before_it_dies():
    # a kernel's segfault or abort(): the rank's fault handler writes the signal's name to
    # the watch, so the driver knows how the rank ended without the launcher's report
    from tuwviz.run import launch, watch

    w = watch.RankWatch()
    try:
        ranks = {}
        for rank, sig in ((3, signal.SIGSEGV), (4, signal.SIGABRT)):
            ranks[rank] = _start("import os, signal, sys, time; from tuwviz.run import watch; "
                                 "watch.connect(int(sys.argv[2]), sys.argv[1]); time.sleep(0.3); "
                                 "os.kill(os.getpid(), int(sys.argv[3]))", w.address, rank, int(sig))
        for rank, proc in ranks.items():
            assert proc.wait(timeout=hang_guard(30)) < 0  # died of its signal
        deadline = time.monotonic() + hang_guard(10)
        while len(w.dead()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sorted(w.dead()) == [3, 4]
        assert (w.fatal(3), w.fatal(4), w.fatal(5)) == ("Segmentation fault", "Aborted", None)
        assert launch._fatal_how(w.fatal(3)) == "killed by signal SIGSEGV (Segmentation fault)"
        assert launch._fatal_how("_PyMem_DebugRawFree: bad ID") is None  # not a signal
    finally:
        w.close()
    # a rank that said goodbye has its fault handler off again: its socket is closed
    r = subprocess.run([sys.executable, "-c", "import faulthandler, sys; from tuwviz.run import watch; "
                        "w = watch.RankWatch(); watch.connect(0, w.address); "
                        "a = faulthandler.is_enabled(); watch.goodbye(); w.close(); "
                        "print(a, faulthandler.is_enabled())"],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                       timeout=hang_guard(60))
    assert r.stdout.split() == ["True", "False"], r.stderr
