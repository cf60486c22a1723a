"""What ``/proc`` says about a process, for the clean-up code of several layers.

:mod:`tuwviz.kernels` asks which kernel libraries live processes still map (those are
never deleted); :mod:`tuwviz.run.reaper` asks which MPICH shared-memory segments they map.
"""
from __future__ import annotations

__all__ = ["mapped_files"]


def mapped_files(pid: int | str = "self") -> list[str]:
    """The files that process `pid` maps (``/proc/<pid>/maps``), each once, in map order;
    none if the process is gone or not ours to read.

    >>> any(p.endswith(".so") or "python" in p for p in mapped_files())
    True
    """
    try:
        with open(f"/proc/{pid}/maps") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    found = {}
    for line in lines:
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5].startswith("/"):
            found.setdefault(fields[5], None)
    return list(found)
