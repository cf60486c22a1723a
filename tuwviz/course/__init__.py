"""The course kit: a student's workspace and its grader.

===============  =========================================================================
module           what it holds
===============  =========================================================================
``workspace``    create a workspace from ``templates/``; make it the one runs see (``use``)
``assignment``   the assignment notebook's sweeps and its views of a grade
``grade``        build a workspace and check its kernels: correctness, optimality, speed,
                 memory
``templates/``   one folder per assignment: C templates, ``algorithms.toml``, README,
                 the assignment notebook
===============  =========================================================================
"""
