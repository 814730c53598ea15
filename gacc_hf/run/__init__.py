"""Stages 2-5, the run: plan -> memories -> answers -> verdicts through the cache, on one process or several,
with its presets and config files."""
