"""The course kit: a student's workspace and its grader.

===============  =========================================================================
module           what it holds
===============  =========================================================================
``assignment``   create a workspace from ``templates/``, and the notebook's views of a grade
``grade``        build a workspace and check its kernels: correctness, optimality, speed,
                 memory
``templates/``   one folder per assignment: C templates, ``algorithms.toml``, README,
                 the assignment notebook
===============  =========================================================================
"""
