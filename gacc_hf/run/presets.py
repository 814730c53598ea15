"""The one definition of the run defaults, as named presets shared by `run_benchmark` and `gacc run`.

A preset names a whole experiment (data, methods, conditions, ratios), so `gacc run` and
`run_benchmark(ds)` with no method arguments are the same experiment, and a newcomer can try the
harness in seconds with `gacc run --preset rules`. `PRESETS` is the single table to edit; the run
settings that are not part of an experiment's design (seed, bootstrap, batching, cache) are
`RUN_DEFAULTS`, also shared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Preset:
    """An experiment by name: what data, which methods, under which conditions and budgets."""

    description: str
    data: str
    compressors: tuple[str, ...]
    reader: str
    judge: str
    conditions: tuple[str, ...]
    ratios: tuple[float, ...]

    def methods(self) -> dict[str, Any]:
        """The settings as `run_benchmark` keyword arguments (everything but the data)."""
        return {
            "compressor": self.compressors,
            "reader": self.reader,
            "judge": self.judge,
            "ratios": self.ratios,
            "conditions": self.conditions,
        }


PRESETS: dict[str, Preset] = {
    "main": Preset(
        description="the main job: the bundled sample (its English groups), truncate vs embed at ratio 0.2 under "
        "own/none, with the full-context and oracle ceilings and the closed-book floor; SmolLM2 reader, contains judge",
        data="sample",
        compressors=("truncate", "embed"),
        reader="smollm2",
        judge="contains",
        conditions=("own", "none", "full", "oracle", "closed"),
        ratios=(0.2,),
    ),
    "baselines": Preset(
        description="every compressor that needs no server, on the sample at the main job's settings (≈ 30 min)",
        data="sample",
        compressors=("truncate", "goal-lines", "bm25", "embed", "llmlingua", "longllmlingua", "smollm2"),
        reader="smollm2",
        judge="contains",
        conditions=("own", "none", "full", "oracle"),
        ratios=(0.2,),
    ),
    "bilingual": Preset(
        description="both languages of the sample (English and Chinese), whole source and oracle memory only: "
        "what the reader makes of each language, scored per language; SmolLM2 reader, contains judge",
        data="sample:all",
        compressors=("truncate",),  # no compressor runs: full and oracle are ceilings
        reader="smollm2",
        judge="contains",
        conditions=("full", "oracle"),
        ratios=(0.2,),
    ),
    "rules": Preset(
        description="rule methods only, on generated data: seconds, no model",
        data="synthetic",
        compressors=("truncate", "goal-lines"),
        reader="fields",
        judge="exact",
        conditions=("own", "none", "cross"),
        ratios=(0.1, 0.25),
    ),
    "curve": Preset(
        description="score against budget: rule methods on generated data at four ratios, with the full-context "
        "ceiling and the closed-book floor; curves and their areas in seconds, no model",
        data="synthetic",
        compressors=("truncate", "goal-lines"),
        reader="fields",
        judge="exact",
        conditions=("own", "full", "closed"),
        ratios=(0.1, 0.2, 0.3, 0.5),
    ),
}
DEFAULT_PRESET = "main"
DEFAULTS = PRESETS[DEFAULT_PRESET]

# Settings of how a run is carried out rather than what it measures.
RUN_DEFAULTS: dict[str, Any] = {
    "seed": 0,
    "n_bootstrap": 1000,
    "batch_size": 64,
    "cache_dir": ".gacc_cache",
    "on_error": "raise",
}


def get_preset(name: str) -> Preset:
    """The preset called `name`; ValueError naming the known presets otherwise."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; known presets: {', '.join(PRESETS)}") from None
