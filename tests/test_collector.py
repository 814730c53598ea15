"""The collector pause: off inside, back as it was after, an error included."""

import gc

import pytest

from gacc_hf.collector import collector_paused


def test_the_collector_is_off_inside_and_on_again_after() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_still_turns_it_on_again() -> None:
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("row 3")
    assert gc.isenabled()


def test_a_pause_inside_a_pause_or_begun_off_leaves_it_off() -> None:
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()  # the inner pause does not end the outer one
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # the caller had it off: still off
    finally:
        gc.enable()


def test_as_a_decorator() -> None:
    @collector_paused()
    def inside() -> bool:
        return gc.isenabled()

    assert inside() is False
    assert gc.isenabled()
