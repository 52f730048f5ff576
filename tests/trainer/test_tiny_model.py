"""The offline tiny model's tokenizer corpus."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from games.api import MAX_SEED
from trainer.checkpoints import save_model_folder
from trainer.tiny_model import corpus


def test_the_corpus_takes_every_seed_the_command_accepts() -> None:
    """Its matches' seeds are derived from the corpus seed; a large one overflowed the games' range."""
    texts = list(itertools.islice(corpus(seed=MAX_SEED, matches_per_game=2), 6))
    assert len(texts) == 6 and all(isinstance(text, str) for text in texts)


class _DiskFillsUp:
    """A model whose weights do not fit: save_pretrained writes its config, then fails as
    safetensors does on a full disk (with an error type of its own)."""

    def save_pretrained(self, folder: Path) -> None:
        from safetensors import SafetensorError

        (folder / "config.json").write_text("{}")
        raise SafetensorError("Error while serializing: No space left on device (os error 28)")


def test_a_save_that_fails_half_way_leaves_no_model_folder_and_says_why_in_one_line(tmp_path: Path) -> None:
    """A full disk left checkpoints/final with a config and no weights, after a 38-line traceback
    (found by a QA helper)."""
    out = tmp_path / "checkpoints" / "final"
    with pytest.raises(OSError, match=r"^cannot save the model folder .*final: Error while serializing: No space left"):
        save_model_folder(_DiskFillsUp(), None, out)
    assert list((tmp_path / "checkpoints").iterdir()) == []


@pytest.mark.parametrize("out", [".", "existing"])
def test_a_failed_save_into_a_folder_that_was_there_leaves_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str
) -> None:
    """Saving beside the folder broke `init-model .` and folders whose parent could not be
    written (found by a QA helper reviewing the save)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "existing").mkdir()
    with pytest.raises(OSError, match="No space left"):
        save_model_folder(_DiskFillsUp(), None, Path(out))
    assert Path(out).is_dir()
