"""Tell which MPI rank died first.

When one MPI process dies, ``mpiexec`` kills all the others at once, and MPICH's report
names whichever process it cleaned up first, not the one that failed.  So every rank
holds a connection to a :class:`RankWatch` in the driver: a rank that ends normally says
goodbye first; a rank that dies just disconnects, and the kernel closes its socket before
mpiexec can even notice the death.  The first connection lost without a goodbye is the
rank that died.

The connection also carries the two other facts a driver cannot see from outside:

* every rank sends ``beat`` once a second from a background thread, so a rank that
  stopped (SIGSTOP, a debugger, a rank swapped out) is named by :meth:`RankWatch.silent`;
  when the *driver* was not running either (a paused virtual machine, a suspended
  laptop: the clock jumps while nobody runs), nobody is blamed: the watch notices the gap
  in its own turns and gives every rank a fresh limit;
* a rank whose connection reports end-of-file without being told goodbye knows that the
  driver is gone (killed, even by SIGKILL) and exits at once, so no engine or rank is left
  running for nobody.

and one fact a hang report needs: each rank says ``in`` when it calls a kernel and ``out``
when the kernel returns (:func:`inside`), so a kernel that deadlocks is reported with the
ranks still inside it, apart from those that returned and wait for the others
(:meth:`RankWatch.inside`).
"""
from __future__ import annotations

import contextlib
import faulthandler
import os
import select
import selectors
import socket
import tempfile
import threading
import time
from typing import Iterator

from .. import config
from . import reaper
from ..errors import KernelBuildError
from ..kernels import sanitizer

__all__ = ["RankWatch", "connect", "goodbye", "inside"]

#: Seconds between a rank's heartbeats.
BEAT = 1.0
#: Longest Unix socket path Linux accepts (sun_path holds 108 bytes with the final NUL).
_MAX_SOCKET_PATH = 107
#: How Python's fault handler starts its report of a fatal signal.
FATAL = "Fatal Python error: "
#: Exit status of a rank that ended because its driver died.
ORPHAN_EXIT = 75
#: Seconds between two turns of the watch's loop (which turns every 0.2 s) that mean this
#: process was not running: the machine was paused or suspended.  Silence over such a gap
#: says nothing about the ranks.
FROZEN = 5.0


class RankWatch:
    """A Unix-socket server in a background thread that records lost ranks in order."""

    def __init__(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="tuwviz-watch-")
        self.address = os.path.join(self._dir, "watch.sock")
        if len(os.fsencode(self.address)) > _MAX_SOCKET_PATH:  # a deep TMPDIR: use /tmp
            os.rmdir(self._dir)
            self._dir = tempfile.mkdtemp(prefix="tuwviz-watch-", dir="/tmp")
            self.address = os.path.join(self._dir, "watch.sock")
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        reaper.remove_on_exit(self._dir)  # if the driver is killed before close()
        self._server.bind(self.address)
        self._server.listen(256)
        self._lock = threading.Lock()
        self._dead: list[int] = []
        self._ranks: dict[socket.socket, int | None] = {}
        self._seen: dict[int, float] = {}  # rank -> time of its last message
        self._inside: dict[int, bool] = {}  # rank -> inside a kernel call
        self._fatal: dict[int, str] = {}  # rank -> the fatal signal its fault handler named
        self._partial: dict[socket.socket, str] = {}  # a message cut by recv()
        self._turn = time.monotonic()  # last time this process was seen running
        self.frozen = 0.0  # seconds this process was seen not running, in all
        self._closing = False
        self._release = threading.Event()
        self._released = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="tuwviz-rank-watch", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        # epoll reports connections in the order they became readable, so the dead
        # rank's EOF comes before those of the ranks mpiexec kills afterwards
        sel = selectors.DefaultSelector()
        sel.register(self._server, selectors.EVENT_READ)
        while not self._closing:
            with self._lock:
                self._check_frozen()
            if self._release.is_set():
                for conn in list(self._ranks):
                    sel.unregister(conn)
                    conn.close()  # the rank sees end-of-file and exits
                self._ranks.clear()
                self._release.clear()
                self._released.set()
            for key, _ in sel.select(timeout=0.2):
                if key.fileobj is self._server:
                    try:
                        conn, _ = self._server.accept()
                    except OSError:
                        return
                    self._ranks[conn] = None
                    sel.register(conn, selectors.EVENT_READ)
                    continue
                conn = key.fileobj
                data = conn.recv(4096)
                if data:
                    *words, self._partial[conn] = (self._partial.get(conn, "")
                                                   + data.decode()).split("\n")
                    for word in words:
                        if word == "bye":
                            self._ranks[conn] = None
                        elif word.isdigit():
                            self._ranks[conn] = int(word)
                        elif word in ("in", "out") and self._ranks.get(conn) is not None:
                            with self._lock:
                                self._inside[self._ranks[conn]] = word == "in"
                        elif word.startswith(FATAL) and self._ranks.get(conn) is not None:
                            with self._lock:
                                self._fatal[self._ranks[conn]] = word[len(FATAL):].strip()
                    if self._ranks.get(conn) is not None:
                        with self._lock:
                            self._seen[self._ranks[conn]] = time.monotonic()
                    continue
                self._partial.pop(conn, None)
                rank = self._ranks.pop(conn, None)
                sel.unregister(conn)
                conn.close()
                if rank is not None:
                    with self._lock:
                        self._dead.append(rank)
        sel.close()

    def _check_frozen(self) -> None:
        # called with the lock held, by the watch's loop and by silent(): whichever runs
        # first after a pause sees the gap
        now = time.monotonic()
        gap = now - self._turn
        self._turn = now
        if gap > FROZEN:
            self.frozen += gap
            for rank in self._seen:
                self._seen[rank] = now

    def clock(self) -> float:
        """Seconds of :func:`time.monotonic` in which this process was running: a limit
        measured on this clock does not expire while the machine is paused."""
        with self._lock:
            self._check_frozen()
            return time.monotonic() - self.frozen

    def inside(self) -> tuple[list[int], list[int]]:
        """(ranks inside a kernel call, ranks that called one and returned), by their last
        word; ranks that never called one are in neither."""
        with self._lock:
            state = dict(self._inside)
        return (sorted(r for r, v in state.items() if v),
                sorted(r for r, v in state.items() if not v))

    def dead(self) -> list[int]:
        """Ranks that disconnected without a goodbye, first loss first."""
        with self._lock:
            return list(self._dead)

    def fatal(self, rank: int) -> str | None:
        """The signal that killed `rank` as its fault handler named it (``Segmentation
        fault``, ``Aborted``, ...), or None: it was not killed by one it could catch."""
        with self._lock:
            return self._fatal.get(rank)

    def silent(self, seconds: float) -> list[int]:
        """Connected ranks that sent nothing (not even a heartbeat) for `seconds`, not
        counting time in which this process itself was not running."""
        with self._lock:
            self._check_frozen()
            now = time.monotonic()
            live = {r for r in list(self._ranks.values()) if r is not None}
            return sorted(r for r in live if now - self._seen.get(r, now) > seconds)

    def forget(self, release: bool = False) -> None:
        """Stop counting current connections (before stopping ranks on purpose).

        With `release`, also close them: every connected rank then exits by itself within
        a second, even one stuck inside MPI (a launcher that is stopped does not always
        take its ranks with it).
        """
        for conn in list(self._ranks):
            self._ranks[conn] = None
        with self._lock:
            self._dead.clear()
            self._seen.clear()
            self._inside.clear()
            self._fatal.clear()
        if release and self._thread.is_alive():
            self._released.clear()
            self._release.set()
            self._released.wait(timeout=2)

    def close(self) -> None:
        self._closing = True
        self._thread.join(timeout=2)
        self._server.close()
        for path in (self.address, self._dir):
            try:
                os.unlink(path) if path == self.address else os.rmdir(path)
            except OSError:
                pass
        reaper.keep(self._dir)


_conn: socket.socket | None = None
_conn_lock = threading.Lock()


def connect(rank: int, address: str | None = None) -> None:
    """Called in each rank: connect to the driver's watch (if it has one) as `rank`.

    Starts the heartbeat thread, which also ends this process if the driver dies.
    """
    global _conn
    address = address or config.watch_address()
    if not address or _conn is not None:
        return
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(address)
        conn.sendall(f"{rank}\n".encode())
    except OSError:
        return  # watching is best effort; the run itself must not depend on it
    _conn = conn
    try:
        sanitized = sanitizer() is not None
    except KernelBuildError:  # an unknown one: loading the kernels says so
        sanitized = True
    if not sanitized:  # AddressSanitizer reports its own crashes
        # a fatal signal (a kernel's segfault, abort(), ...) is named on the socket before
        # the rank dies: the driver need not wait for the launcher to say how it ended
        faulthandler.enable(file=conn.fileno(), all_threads=False)
    threading.Thread(target=_beat, args=(conn,), name="tuwviz-heartbeat", daemon=True).start()


def _beat(conn: socket.socket) -> None:
    while True:
        try:
            readable, _, _ = select.select([conn], [], [], BEAT)
        except (OSError, ValueError):
            return  # closed by goodbye()
        with _conn_lock:
            if _conn is not conn:
                return
            try:
                if readable and not conn.recv(64):
                    # the driver's end closed without a goodbye from us: it died
                    _exit_orphaned()
                conn.sendall(b"beat\n")
            except OSError:
                _exit_orphaned()


def _exit_orphaned() -> None:
    """Exit at once; first remove MPICH's shared-memory segments, which MPI_Finalize would
    have removed and the driver no longer can (the other ranks keep their mappings)."""
    reaper.release_segments(reaper.mpich_segments(), tell=False)
    os._exit(ORPHAN_EXIT)


@contextlib.contextmanager
def inside() -> Iterator[None]:
    """Called in a rank around a kernel call: tells the driver's watch when the rank is in
    it, so a hang report can name the ranks still inside (nothing without a watch)."""
    _say(b"in\n")
    try:
        yield
    finally:
        _say(b"out\n")


def _say(word: bytes) -> None:
    with _conn_lock:
        if _conn is not None:
            try:
                _conn.sendall(word)
            except OSError:
                pass  # the heartbeat thread notices a lost driver


def goodbye() -> None:
    """Called in each rank before a normal exit."""
    global _conn
    with _conn_lock:
        conn, _conn = _conn, None
    if conn is not None:
        if faulthandler.is_enabled():
            faulthandler.disable()  # it writes to this socket's descriptor, closed now
        try:
            conn.sendall(b"bye\n")
            conn.close()
        except OSError:
            pass
