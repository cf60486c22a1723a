"""Running cases on MPI ranks: the layer below every experiment.

=============  ===========================================================================
module         what it holds
=============  ===========================================================================
``runner``     what a rank does with one case: build buffers, call the kernel, check, time
``worker``     the rank side of an ``mpiexec`` job (``python -m tuwviz.run.worker``)
``launch``     the driver side: start ``mpiexec``, read results as they come, name failures
``slurm``      ``srun`` as the launcher instead (``--launcher srun``): command, reports, cancel
``engines``    the same on ipyparallel MPI engines (:class:`~tuwviz.run.engines.Engines`)
``smpi``       the same on SimGrid's simulated ranks, a platform of the papers (``smpi_c/``)
``watch``      ranks and driver watch each other: a dead driver ends its ranks
``reaper``     a watchdog process that ends what a killed driver started
``trace``      record the messages each rank sends and receives
``metadata``   where and how a run happened: hosts, oversubscription, MPI, commit
``typepairs``  the datatype pairs (the root's types differing from the others')
=============  ===========================================================================

Nothing here imports :mod:`tuwviz.experiments` or above (``tests/test_architecture.py``).
"""
