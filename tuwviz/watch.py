"""Tell which MPI rank died first.

When one MPI process dies, ``mpiexec`` kills all the others at once, and MPICH's report
names whichever process it cleaned up first, not the one that failed.  So every rank
holds a connection to a :class:`RankWatch` in the driver: a rank that ends normally says
goodbye first; a rank that dies just disconnects, and the kernel closes its socket before
mpiexec can even notice the death.  The first connection lost without a goodbye is the
rank that died.
"""
from __future__ import annotations

import os
import selectors
import socket
import tempfile
import threading

__all__ = ["RankWatch", "connect", "goodbye", "ENV_VAR"]

ENV_VAR = "TUWVIZ_WATCH"


class RankWatch:
    """A Unix-socket server in a background thread that records lost ranks in order."""

    def __init__(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="tuwviz-watch-")
        self.address = os.path.join(self._dir, "watch.sock")
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(self.address)
        self._server.listen(256)
        self._lock = threading.Lock()
        self._dead: list[int] = []
        self._ranks: dict[socket.socket, int | None] = {}
        self._closing = False
        self._thread = threading.Thread(target=self._serve, name="tuwviz-rank-watch", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        # epoll reports connections in the order they became readable, so the dead
        # rank's EOF comes before those of the ranks mpiexec kills afterwards
        sel = selectors.DefaultSelector()
        sel.register(self._server, selectors.EVENT_READ)
        while not self._closing:
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
                data = conn.recv(64)
                if data:
                    for word in data.decode().split():
                        if word == "bye":
                            self._ranks[conn] = None
                        elif word.isdigit():
                            self._ranks[conn] = int(word)
                    continue
                rank = self._ranks.pop(conn, None)
                sel.unregister(conn)
                conn.close()
                if rank is not None:
                    with self._lock:
                        self._dead.append(rank)
        sel.close()

    def dead(self) -> list[int]:
        """Ranks that disconnected without a goodbye, first loss first."""
        with self._lock:
            return list(self._dead)

    def forget(self) -> None:
        """Stop counting current connections (before stopping ranks on purpose)."""
        for conn in list(self._ranks):
            self._ranks[conn] = None
        with self._lock:
            self._dead.clear()

    def close(self) -> None:
        self._closing = True
        self._thread.join(timeout=2)
        self._server.close()
        for path in (self.address, self._dir):
            try:
                os.unlink(path) if path == self.address else os.rmdir(path)
            except OSError:
                pass


_conn: socket.socket | None = None


def connect(rank: int, address: str | None = None) -> None:
    """Called in each rank: connect to the driver's watch (if it has one) as `rank`."""
    global _conn
    address = address or os.environ.get(ENV_VAR)
    if not address or _conn is not None:
        return
    try:
        _conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        _conn.connect(address)
        _conn.sendall(f"{rank}\n".encode())
    except OSError:
        _conn = None  # watching is best effort; the run itself must not depend on it


def goodbye() -> None:
    """Called in each rank before a normal exit."""
    global _conn
    if _conn is not None:
        try:
            _conn.sendall(b"bye\n")
            _conn.close()
        except OSError:
            pass
        _conn = None
