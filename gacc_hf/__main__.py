"""`python -m gacc_hf ...` (used by `accelerate launch -m gacc_hf`) is the `gacc` command."""

from gacc_hf.cli import entry

entry()
