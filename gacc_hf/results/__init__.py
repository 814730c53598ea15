"""Stage 7, the results: what a run returns, its folder on disk, the report and the plots."""
