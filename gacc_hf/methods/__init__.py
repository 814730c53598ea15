"""Built-in methods, one file per family; importing this package registers their names."""

from gacc_hf.methods.judges import ContainsJudge, ExactJudge, F1Judge
from gacc_hf.methods.rules import FieldsReader, FullCompressor, GoalLinesCompressor, TruncateCompressor
from gacc_hf.registry import register

register("compressor", "full", FullCompressor)
register("compressor", "truncate", TruncateCompressor)
register("compressor", "goal-lines", GoalLinesCompressor)
register("reader", "fields", FieldsReader)
register("judge", "exact", ExactJudge)
register("judge", "contains", ContainsJudge)
register("judge", "f1", F1Judge)

__all__ = [
    "ContainsJudge",
    "ExactJudge",
    "F1Judge",
    "FieldsReader",
    "FullCompressor",
    "GoalLinesCompressor",
    "TruncateCompressor",
]
