"""What measurements and models mean: fits, verdicts, optimality, guidelines.

================  ========================================================================
module            what it holds
================  ========================================================================
``fits``          cost fits and the verdicts the notebooks print (ring, pipeline, groups)
``optimality``    rounds and bytes of a recorded trace against the lower bounds
``performance``   a kernel against the library over message sizes (the course report)
``guidelines/``   the papers' performance guidelines checked on bench rows
================  ========================================================================

They read what :mod:`tuwviz.experiments` measures and :mod:`tuwviz.model` predicts.
"""
