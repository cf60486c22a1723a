"""Building and loading the C kernels: cache, rebuild on change, compiler errors, registry."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from support import hang_guard, run_cli

from tuwviz import config, kernels
from tuwviz.collectives import COLLECTIVES
from tuwviz.errors import KernelBuildError, MPINotFoundError
from tuwviz.run.launch import record_launch


@pytest.fixture
def source_copy(tmp_path, monkeypatch):
    """A private copy of kernels_c and build dir, as a student editing kernels would have."""
    src = tmp_path / "kernels_c"
    shutil.copytree(config.KERNELS_DIR, src, ignore=shutil.ignore_patterns("build"))
    monkeypatch.setenv("TUWVIZ_BUILD_DIR", str(tmp_path / "build"))
    return src


def test_build_is_cached_and_rebuilt_when_a_source_changes(source_copy, monkeypatch):
    first = kernels.build(source_copy)
    assert first.exists()
    stamp = first.stat().st_mtime_ns
    assert kernels.build(source_copy) == first and first.stat().st_mtime_ns == stamp
    c_file = source_copy / "gatherv" / "gatherv_linear.c"
    objects = set((first.parent / "obj").glob("*.o"))
    c_file.write_text(c_file.read_text() + "\n/* a student's edit */\n")
    second = kernels.build(source_copy)
    assert second != first and second.exists()
    # one file edited, one file compiled (and the generated registry): not the whole library
    new_objects = sorted(o.name.rsplit("-", 1)[0] for o in
                         set((first.parent / "obj").glob("*.o")) - objects)
    assert new_objects == ["gatherv_linear", second.stem + ".registry"], new_objects
    # an edit that keeps the size, and a new file: the sources' digest is cached per
    # process by file stats, so these must still be seen
    c_file.write_text(c_file.read_text().replace("a student's edit", "a student's EDIT"))
    third = kernels.build(source_copy)
    assert third not in (first, second)
    # a workspace (a student's own rows and files) compiles its files and the registry,
    # not the package's again: its function names are not in the package's prototypes
    from tuwviz.course.workspace import new
    from tuwviz.table import WORKSPACE_VAR

    objects = set((first.parent / "obj").glob("*.o"))
    monkeypatch.setenv(WORKSPACE_VAR, str(new("gather-scatter", source_copy.parent / "ws")))
    fourth = kernels.build(source_copy)
    new_objects = sorted(o.name.rsplit("-", 1)[0] for o in
                         set((first.parent / "obj").glob("*.o")) - objects)
    assert new_objects == sorted(["my_gather", "my_scatter", fourth.stem + ".registry"]), new_objects
    monkeypatch.delenv(WORKSPACE_VAR)
    (source_copy / "include" / "extra.h").write_text("/* new */\n")
    assert kernels.library_path(source_copy) not in (first, second, third)


def test_a_pinned_run_keeps_its_build_when_a_source_changes(source_copy):
    """A sweep runs one build: a file saved meanwhile is compiled for the next run."""
    c_file = source_copy / "gatherv" / "gatherv_linear.c"
    with kernels.pinned(source_copy):
        lib = kernels.load(source_copy)
        c_file.write_text(c_file.read_text() + "\n/* saved while a sweep runs */\n")
        assert kernels.load(source_copy) is lib
        assert kernels.find_algorithm("gatherv", "linear", source_copy).function == "TUW_Gatherv_linear"
    after = kernels.load(source_copy)
    assert after is not lib and kernels.library_path(source_copy).name in after._name


def test_a_build_removes_stale_libraries_but_not_loaded_ones(source_copy):
    # every edit used to leave its library in build/kernels for good
    c_file = source_copy / "gatherv" / "gatherv_linear.c"

    def edited(i):
        c_file.write_text(c_file.read_text() + f"\n/* edit {i} */\n")
        return kernels.build(source_copy)

    first = kernels.build(source_copy)
    # a process that has the first library mapped, as a running engine has it loaded
    holder = subprocess.Popen(
        [sys.executable, "-c", "import mmap, sys; f = open(sys.argv[1], 'rb'); "
         "m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ); print('mapped', flush=True); "
         "sys.stdin.read()", str(first)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "mapped"
        assert first.resolve() in kernels.loaded_libraries(first.parent)
        libs = [first] + [edited(i) for i in range(1, kernels.KEEP_LIBRARIES + 2)]
        assert first.exists(), "a loaded library was removed"
        assert not libs[1].exists() and not libs[1].with_suffix(".registry.c").exists()
        assert all(lib.exists() for lib in libs[-kernels.KEEP_LIBRARIES:])
    finally:
        holder.kill()
        holder.wait()
    latest = edited(99)
    assert not first.exists(), "no longer loaded, the oldest library stays"
    left = sorted(first.parent.glob("libtuwviz-*.so"))
    assert len(left) == kernels.KEEP_LIBRARIES and latest in left
    # another variant (a sanitizer's build) is not this variant's to clean
    other = first.parent / "libtuwviz-asan-0123456789abcdef.so"
    other.write_bytes(b"")
    assert kernels.clean_stale(latest) == [] and other.exists()


def test_a_build_is_announced_with_its_time_and_a_cached_one_is_silent(source_copy, monkeypatch):
    # a rebuild takes up to a minute: without the note, `tuwviz list` looks hung
    monkeypatch.setenv("TUWVIZ_KERNELS", str(source_copy))
    compiling = r"compiling C kernels from .*kernels_c \((first build|sources changed)\)\.\.\."
    compiled = r"compiled C kernels in \d+\.\d s"

    def notes(r):
        assert r.returncode == 0, r.stderr
        return [l for l in r.stderr.splitlines() if "C kernels" in l]

    first = notes(run_cli("list"))
    assert len(first) == 2 and "(first build)" in first[0], first
    assert re.fullmatch(compiling, first[0]) and re.fullmatch(compiled, first[1]), first
    assert notes(run_cli("list")) == []  # cached: nothing to say
    c_file = source_copy / "gatherv" / "gatherv_linear.c"
    c_file.write_text(c_file.read_text() + "\n/* a student's edit */\n")
    edited = notes(run_cli("list"))
    assert len(edited) == 2 and "(sources changed)" in edited[0], edited
    assert re.fullmatch(compiled, edited[1]), edited
    # MPI ranks that find the sources changed build quietly: p ranks, not p notes
    from tuwviz.run.launch import local_mpi_command

    c_file.write_text(c_file.read_text() + "\n/* another edit */\n")
    record_launch("mpiexec", 2)  # counted by tests/support/budget.py
    r = subprocess.run([*local_mpi_command(), "-n", "2", sys.executable, "-m", "tuwviz.kernels"],
                       capture_output=True, text=True, timeout=hang_guard(300), env=os.environ)
    assert r.returncode == 0, r.stderr
    # two ranks print to one pipe: their lines may interleave, so find the paths, not lines
    built = set(re.findall(r"/\S*?libtuwviz[^/\s]*?-[0-9a-f]+\.so", r.stdout))
    assert len(built) == 1 and os.path.exists(built.pop())
    assert "C kernels" not in r.stderr + r.stdout, r.stderr


def test_a_notebook_shows_the_build_note_under_the_cell(source_copy, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("TUWVIZ_KERNELS", str(source_copy))  # the kernel inherits both
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from tuwviz.kernels import algorithms\n"
                                          "len(algorithms())")]
    record_launch("notebook", 1)  # counted by tests/support/budget.py
    NotebookClient(nb, timeout=hang_guard(600), kernel_name="python3").execute()
    stderr = "".join(o.get("text", "") for o in nb.cells[0].outputs
                     if o.get("name") == "stderr")
    assert re.search(r"^compiling C kernels from .*\(first build\)\.\.\.$", stderr, re.M), stderr
    assert re.search(r"^compiled C kernels in \d+\.\d s$", stderr, re.M), stderr


def test_compile_error_shows_the_compilers_file_and_line(source_copy):
    c_file = source_copy / "gatherv" / "gatherv_linear.c"
    lines = c_file.read_text().splitlines()
    at = next(i for i, l in enumerate(lines) if "rc = tuw_rooted_begin(comm, root, &rank, &p);" in l)
    lines[at] = "    rc = tuw_rooted_begin(comm, root, &rank, &p)   /* missing semicolon */"
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
