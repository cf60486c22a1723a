"""Side-by-side model predictions are the simulator's numbers, labelled as model."""
from tuwviz.model import schedule, simulate
from tuwviz.model.compare import predict
from tuwviz.problems import make_problem


def test_predict_rows_equal_the_simulator_and_are_labelled_model():
    problems = [make_problem("gatherv", p, "spikes", 10, seed=p) for p in (3, 16)]
    df = predict("gatherv", ["linear"], problems, alpha=2e-6, beta=1e-9)
    assert list(df["p"]) == [3, 16] and set(df["source"]) == {"model"}
    for pr, t in zip(problems, df["time_us"]):
        assert t == round(simulate(schedule("gatherv", "linear", pr), 2e-6, 1e-9).time * 1e6, 6)
    assert (df["ratio_to_best"] == 1.0).all()  # one algorithm: it is the best
