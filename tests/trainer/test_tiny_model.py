"""The offline tiny model's tokenizer corpus."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from games.api import MAX_SEED
from trainer.checkpoints import not_a_model_folder, save_model_folder
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


class _CtrlCMidSave:
    """A save interrupted by Ctrl-C once its config is written, before its weights."""

    def save_pretrained(self, folder: Path) -> None:
        (folder / "config.json").write_text("{}")
        raise KeyboardInterrupt


def test_a_save_interrupted_half_way_leaves_no_model_folder(tmp_path: Path) -> None:
    """A run stopped as it saved ``final`` said "no final checkpoint" beside a final holding a
    config.json alone, which ``arena play`` then offered to overwrite with a random model
    (found by a QA helper)."""
    out = tmp_path / "checkpoints" / "final"
    with pytest.raises(KeyboardInterrupt):
        save_model_folder(_CtrlCMidSave(), None, out)
    assert list((tmp_path / "checkpoints").iterdir()) == []


def test_a_folder_holding_part_of_a_model_is_said_to_be_cut_short_not_to_be_built(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "part").mkdir()
    (tmp_path / "part" / "config.json").write_text('{"model_type": "qwen2"}')  # saved first, then cut short
    assert not_a_model_folder(tmp_path / "part").endswith(
        "(no weights, no tokenizer files); was its save cut short, or a copy? save or copy it again whole"
    )
    (tmp_path / "other").mkdir()  # a wrong path, not part of a model (found by a QA helper reviewing the change)
    (tmp_path / "other" / "config.json").write_text('{"updates": 3}')  # a training run's, say
    assert not_a_model_folder(tmp_path / "other").endswith(
        "; name the folder that holds a model's config.json, weights and tokenizer files"
    )
    for absent in ("empty", "absent"):
        assert not_a_model_folder(tmp_path / absent).endswith(f"build one with `arena train init-model {tmp_path / absent}`")
