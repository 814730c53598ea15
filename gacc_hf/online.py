"""The offline switch every networked step checks first: `HF_HUB_OFFLINE` set means no Hub at all.

Kept below every stage because loading a Hub dataset (stage 1) and publishing (stage 8) refuse alike.
"""

from __future__ import annotations

import os


class OfflineError(RuntimeError):
    """A Hub step (loading a dataset, publishing) was asked for while the Hub is unreachable by configuration
    or by the network."""


def require_online(action: str) -> None:
    """Fail before doing anything when HF_HUB_OFFLINE is set."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        raise OfflineError(f"cannot {action}: HF_HUB_OFFLINE is set; unset it (and log in) to reach the Hub")
