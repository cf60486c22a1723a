"""The tables notebooks show keep every cell whole (pandas cuts cells at 50 characters)."""
import subprocess
import sys

import pandas as pd

from support import hang_guard
from tuwviz import kernels
from tuwviz.experiments.bench import bench
from tuwviz.frames import FullFrame


def test_algorithm_descriptions_are_shown_whole():
    # notebook 00's table of algorithms
    shown = FullFrame(kernels.algorithms())[["collective", "name", "description"]]
    html, text = shown._repr_html_(), repr(shown)
    descriptions = [a.description for a in kernels.algorithms()]
    assert max(map(len, descriptions)) > 50  # long enough for pandas to cut
    for d in descriptions:
        assert d.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in html, d
        assert d in text, d


def test_bench_params_are_shown_whole():
    # notebook 02's tuned pipelined ring: fitted alpha and beta and the block size in a cell
    params = {"alpha": [2.0913745103448e-05], "beta": [3.14159265358e-10],
              "block_bytes": [1 << 20]}
    df = bench("allgatherv", ["ring", "pipelined"], ps=[2], bs=[1000], params=params, reps=2,
               warmup=0, progress=False)
    label = "alpha=2.091e-05 beta=3.142e-10 block_bytes=1048576"
    assert label in set(df["params"])
    shown = df[["algorithm", "params", "median_us"]]
    assert isinstance(shown, FullFrame) and isinstance(pd.concat([df, df]), FullFrame)
    assert label in shown._repr_html_() and label in repr(shown)
    # the same cells in a plain DataFrame are cut ("block_bytes=104..."): the check can fail
    assert label not in pd.DataFrame(shown)._repr_html_()


def test_importing_it_loads_no_pandas_until_a_frame_is_made():
    # the modules returning FullFrames stay light to import (``tuwviz --help``)
    code = ("import sys, tuwviz.frames, tuwviz.experiments.bench\n"
            "print('pandas' in sys.modules)\n"
            "tuwviz.frames.FullFrame({'a': [1]})\n"
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=hang_guard(120))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]
