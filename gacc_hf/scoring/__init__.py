"""Stage 6, the scores: Micro/Macro with CIs, paired comparisons, evidence recall and the integrity audits."""
