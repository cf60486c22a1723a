# ipyparallel profile "local": MPI engines started with mpiexec on this machine.
#
# Used by tuwviz.cluster.LocalCluster, and directly by
#     ipcluster start --profile-dir=cluster_profiles/local -n 4
# The controller listens on 127.0.0.1 only; ipyparallel signs every message with the
# random key in the connection files it writes to security/ (readable by you alone).
import os
import sys

c = get_config()  # noqa: F821 - provided by ipyparallel when it loads this file

c.Cluster.engine_launcher_class = "mpi"
c.Cluster.n = int(os.environ.get("TUWVIZ_ENGINES", "4"))
c.Cluster.controller_ip = "127.0.0.1"
c.IPController.ip = "127.0.0.1"

# The mpiexec of the MPI that mpi4py uses (the venv's, after `pip install mpich`); a bare
# "mpiexec" would pick whatever MPI happens to be first on PATH.
_mpiexec = os.path.join(sys.prefix, "bin", "mpiexec")
c.MPILauncher.mpi_cmd = [_mpiexec if os.path.exists(_mpiexec) else "mpiexec"]
