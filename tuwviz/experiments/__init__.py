"""Sweeps of cases over p, distributions, block sizes, roots and parameters.

==============  ==========================================================================
module          what it holds
==============  ==========================================================================
``sweep``       what verify and bench share: parsing ranges and names, roots, run metadata
``verify``      every kernel against the MPI library's collective, byte for byte
``bench``       algorithms timed side by side, tidy CSV rows written as they are measured
``calibrate``   this machine's alpha, beta, gamma, measured and cached
``study``       the circulant paper's consistency study as one measured sweep
==============  ==========================================================================

They run on :mod:`tuwviz.run` and never import :mod:`tuwviz.analysis` or above.
"""
