"""Why each answer was right or wrong: the evidence flag crossed with the verdict (a reading aid, not a score).

An answer row already says whether its memory holds a reference (`evidence`) and whether the judge found it
right (`correct`). Crossing the two splits every answer into one of four outcomes:

| outcome   | correct | evidence | whose result                                       |
|-----------|---------|----------|----------------------------------------------------|
| `right`   | yes     | yes      | the memory kept the fact and the reader used it    |
| `guessed` | yes     | no       | the reader was right without the fact in memory    |
| `missed`  | no      | yes      | the reader's loss: the fact was there              |
| `lost`    | no      | no       | the compressor's loss: the fact was dropped        |

A row the reader or judge failed on (`correct` is None) has no outcome.
"""

from __future__ import annotations

OUTCOMES: tuple[str, ...] = ("right", "guessed", "missed", "lost")


def outcome(correct: bool | None, evidence: bool | None) -> str | None:
    """The outcome of one answer; None when the answer has no verdict.

    >>> outcome(True, True), outcome(True, False), outcome(False, True), outcome(False, False)
    ('right', 'guessed', 'missed', 'lost')
    >>> outcome(None, True) is None
    True
    """
    if correct is None:
        return None
    if correct:
        return "right" if evidence else "guessed"
    return "missed" if evidence else "lost"
