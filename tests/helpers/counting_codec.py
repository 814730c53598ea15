"""The real cl100k codec, recording every text it encodes: for tests that a text is encoded once."""

from __future__ import annotations

from gacc_hf.tokenizer import get_codec


class CountingCodec:
    def __init__(self) -> None:
        self.codec, self.encoded = get_codec(), []

    def encode(self, text: str) -> list[int]:
        self.encoded.append(text)
        return self.codec.encode(text)

    def decode(self, ids: list[int]) -> str:
        return self.codec.decode(ids)

    def __hash__(self) -> int:  # memoised callers take the codec as a key; equality stays identity
        return 0
