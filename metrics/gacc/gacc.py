"""GACC-Bench Micro and all-correct Macro as an `evaluate` metric.

The implementation is `gacc_hf.metric.Gacc` from the `gacc-hf` package (pip install gacc-hf); this file
only exposes it to `evaluate.load`. Configs: default, contains, verdicts.
"""

from gacc_hf.metric import Gacc

__all__ = ["Gacc"]
