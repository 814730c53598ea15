"""Slow rule methods for crash and multi-process tests, importable by `gacc run` subprocesses.

Named on the command line as `import:tests.helpers.methods:SlowTruncate` (with the repository root on PYTHONPATH). Each
call sleeps `GACC_TEST_DELAY` seconds (default 0.02) so that a run lasts long enough to be killed at a
chosen point; the delay is not part of the revision because it does not change any output.
"""

from __future__ import annotations

import os
import time

from gacc_hf.methods.rules import FieldsReader, TruncateCompressor
from gacc_hf.protocol import CompressorInput, ReaderInput


def _pause() -> None:
    time.sleep(float(os.environ.get("GACC_TEST_DELAY", "0.02")))


class SlowTruncate(TruncateCompressor):
    """The `truncate` baseline, slowed down."""

    name = "slow-truncate"
    revision = "slow-truncate-v1"

    def __call__(self, item: CompressorInput) -> str:
        _pause()
        return super().__call__(item)


class SlowFields(FieldsReader):
    """The `fields` reader, slowed down."""

    name = "slow-fields"
    revision = "slow-fields-v1"

    def __call__(self, item: ReaderInput) -> str:
        _pause()
        return super().__call__(item)
