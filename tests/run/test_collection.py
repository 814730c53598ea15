import gc

import pytest

from gacc_hf.run.collection import RUN_THRESHOLDS, fewer_collections


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_thresholds_are_raised_for_the_block_and_restored(thresholds):
    with fewer_collections():
        assert gc.get_threshold() == (*RUN_THRESHOLDS, 10)
        with fewer_collections():  # nested: the inner end restores nothing
            pass
        assert gc.get_threshold() == (*RUN_THRESHOLDS, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_thresholds_are_restored_when_the_run_raises(thresholds):
    with pytest.raises(KeyError), fewer_collections():
        raise KeyError("x")
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_threshold_of_the_caller_is_kept(thresholds):
    gc.set_threshold(RUN_THRESHOLDS[0] * 2, 5, 5)
    with fewer_collections():
        assert gc.get_threshold() == (RUN_THRESHOLDS[0] * 2, RUN_THRESHOLDS[1], 5)  # each kept when higher
    assert gc.get_threshold() == (RUN_THRESHOLDS[0] * 2, 5, 5)


def test_run_benchmark_runs_with_fewer_collections(thresholds, monkeypatch):
    import gacc_hf
    from gacc_hf.run import benchmark

    seen = []
    real = benchmark.setting_scores
    monkeypatch.setattr(benchmark, "setting_scores", lambda *a: seen.append(gc.get_threshold()[0]) or real(*a))
    gacc_hf.run_benchmark(gacc_hf.synthetic(seed=0, contexts=2), "truncate", "fields", "exact", progress=False)
    assert seen == [RUN_THRESHOLDS[0]] and gc.get_threshold() == (700, 10, 10)
