"""Guard for model speed-ups: p = 300 random schedules, ops and predicted time unchanged.

The hashes and times were recorded from the model as of commit d9001cf (before the
speed-ups); any change to a schedule or a prediction shows here.
"""
import hashlib
import json

import pytest

from tuwviz import model
from tuwviz.model.program import op_to_dict
from tuwviz.problems import make_problem

#: (collective, algorithm, params, sha1 of the programs as JSON, predicted time at 2 µs, 1 ns/B)
GOLDEN = [
    ("gatherv", "tuw", {}, "29cda4a06a53e5dd771d57714e94feaf43291db3", 0.000179),
    ("scatterv", "tuw", {}, "84fb9366bcc4c4441925998bf38afd7d3285a1e3", 0.000180508),
    ("gatherv", "binomial", {}, "71900a2fab5179aefcf2a47d58a270fe1db24c86", 0.000159708),  # sizes ahead, no probe, since issue 11
    ("scatterv", "binomial", {}, "c4848386923b632b867dd16c5da81922c4333d49", 0.00016693599999999993),  # sizes messages int64 since issue 21
    ("gatherv", "linear", {}, "43536aacedc1eb02e4b22498c1251c5248501b64", 0.0007245920000000033),
    ("allgatherv", "pipelined", {'block_bytes': 400}, "f64b21d1072166c92a3f64dbb6588e6798cdce6c", 0.0011088000000000155),
    ("allgatherv", "ring", {}, "423149cec9b94ab492136d5087b75e94f35ca3c7", 0.0008372000000000092),
]


@pytest.mark.parametrize("collective, algorithm, params, digest, time", GOLDEN)
def test_p300_random_schedule_and_prediction_unchanged(collective, algorithm, params, digest,
                                                       time):
    pr = make_problem(collective, 300, "random", 100, root=123, datatype="int")
    s = model.schedule(collective, algorithm, pr, **params)
    programs = [[op_to_dict(op) for op in prog] for prog in s.programs]
    assert hashlib.sha1(json.dumps(programs).encode()).hexdigest() == digest
    assert model.simulate(s, 2e-6, 1e-9).time == time
