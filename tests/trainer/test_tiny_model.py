"""The offline tiny model's tokenizer corpus."""

from __future__ import annotations

import itertools

from games.api import MAX_SEED
from trainer.tiny_model import corpus


def test_the_corpus_takes_every_seed_the_command_accepts() -> None:
    """Its matches' seeds are derived from the corpus seed; a large one overflowed the games' range."""
    texts = list(itertools.islice(corpus(seed=MAX_SEED, matches_per_game=2), 6))
    assert len(texts) == 6 and all(isinstance(text, str) for text in texts)
