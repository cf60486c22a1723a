"""Building and loading the C kernels: cache, rebuild on change, compiler errors, registry."""
import shutil

import pytest

from tuwviz import kernels
from tuwviz.collectives import COLLECTIVES
from tuwviz.errors import KernelBuildError, MPINotFoundError


@pytest.fixture
def source_copy(tmp_path, monkeypatch):
    """A private copy of kernels_c and build dir, as a student editing kernels would have."""
    src = tmp_path / "kernels_c"
    shutil.copytree(kernels.KERNELS_DIR, src, ignore=shutil.ignore_patterns("build"))
    monkeypatch.setenv("TUWVIZ_BUILD_DIR", str(tmp_path / "build"))
    return src


def test_build_is_cached_and_rebuilt_when_a_source_changes(source_copy):
    first = kernels.build(source_copy)
    assert first.exists()
    stamp = first.stat().st_mtime_ns
    assert kernels.build(source_copy) == first and first.stat().st_mtime_ns == stamp
    c_file = source_copy / "gatherv" / "gatherv_linear.c"
    c_file.write_text(c_file.read_text() + "\n/* a student's edit */\n")
    second = kernels.build(source_copy)
    assert second != first and second.exists()


def test_compile_error_shows_the_compilers_file_and_line(source_copy):
    c_file = source_copy / "gatherv" / "gatherv_linear.c"
    lines = c_file.read_text().splitlines()
    at = next(i for i, l in enumerate(lines) if "MPI_Comm_rank(comm, &rank);" in l)
    lines[at] = "    MPI_Comm_rank(comm, &rank)   /* missing semicolon */"
    c_file.write_text("\n".join(lines) + "\n")
    with pytest.raises(KernelBuildError) as info:
        kernels.build(source_copy)
    # gcc points at the end of the edited line (1-based line number at + 1)
    assert f"gatherv_linear.c:{at + 1}:" in str(info.value)
    assert "error" in str(info.value)


def test_explicit_mpicc_that_does_not_exist_is_an_error(monkeypatch, source_copy):
    monkeypatch.setenv("MPICC", "/nonexistent/mpicc")
    with pytest.raises(MPINotFoundError, match="MPICC=/nonexistent/mpicc"):
        kernels.build(source_copy)


def test_missing_source_dir_is_an_error(tmp_path):
    with pytest.raises(KernelBuildError, match="not a directory"):
        kernels.build(tmp_path / "nope")


def test_registry_has_native_for_every_collective_and_linear_gatherv():
    algs = kernels.algorithms()
    natives = {a.collective for a in algs if a.name == "native"}
    assert natives == set(COLLECTIVES)
    assert all(a.is_library for a in algs if a.name == "native")
    linear = kernels.find_algorithm("gatherv", "linear")
    assert not linear.is_library and "root" in linear.description
    names = [(a.collective, a.name) for a in algs]
    assert len(names) == len(set(names)), "algorithm names must be unique per collective"


def test_unknown_algorithm_lists_valid_ones():
    with pytest.raises(ValueError, match="valid algorithms: native, linear"):
        kernels.find_algorithm("gatherv", "bogus")
