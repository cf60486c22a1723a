# ipyparallel profile "local": MPI engines started with mpiexec on this machine.
#
# Used by tuwviz.run.engines.Engines, and directly by
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
# "mpiexec" would pick whatever MPI happens to be first on PATH.  MPICH's single-machine
# launcher mpiexec.gforker opens no TCP port (Hydra's mpiexec listens on 0.0.0.0), and the
# environment keeps the ranks' own sockets on the loopback interface: nothing here is
# reachable from other machines.
_bin = os.path.join(sys.prefix, "bin")
for _name in ("mpiexec.gforker", "mpiexec"):
    if os.access(os.path.join(_bin, _name), os.X_OK):
        c.MPILauncher.mpi_cmd = [os.path.join(_bin, _name)]
        break
else:
    c.MPILauncher.mpi_cmd = ["mpiexec"]
c.EngineLauncher.environment = {
    "UCX_NET_DEVICES": "lo", "FI_TCP_IFACE": "lo", "FI_SOCKETS_IFACE": "lo",
    "OMPI_MCA_btl_tcp_if_include": "lo", "OMPI_MCA_oob_tcp_if_include": "lo",
}
