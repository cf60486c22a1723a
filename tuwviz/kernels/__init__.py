"""The C kernels from Python: build, load, set their parameters, call their topology.

==============  ==========================================================================
module          what it holds
==============  ==========================================================================
``build``       compile ``kernels_c/`` (and a workspace) into a cached shared library
``load``        load it through ctypes, check it against the Python mirrors, list rows
``setters``     the tuning parameters, through the C setters the table names
``topology``    the C topology builders under their Python twins' signatures
==============  ==========================================================================

The names below are the ones the rest of tuwviz uses, importable from here.

Examples
--------
>>> [a.name for a in algorithms("gatherv")]
['native', 'linear', 'binomial', 'tuw', 'circulant']
"""
from .build import (KEEP_LIBRARIES, build, clean_stale, find_mpicc, library_path,
                    loaded_libraries, prototypes_source, registry_source, sanitize_env,
                    sanitizer)
from .load import (TRACE_DIRS, Algorithm, TuwArgs, TuwEvent, algorithms, comm_handle,
                   find_algorithm, heavy_yield, load, mirrored_constants, mpi_library_version,
                   pinned)

__all__ = ["Algorithm", "KEEP_LIBRARIES", "TRACE_DIRS", "TuwArgs", "TuwEvent", "algorithms",
           "build", "clean_stale", "comm_handle", "find_algorithm", "find_mpicc",
           "heavy_yield", "library_path", "load", "loaded_libraries", "mirrored_constants",
           "mpi_library_version", "pinned", "prototypes_source", "registry_source",
           "sanitize_env", "sanitizer"]
