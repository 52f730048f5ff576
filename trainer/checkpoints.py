"""What a model folder is, for every part that takes one (the policy, configs, the nightly).

A model folder is what ``save_pretrained`` writes: the trainer's checkpoints, the tiny
model, a downloaded real checkpoint. Telling one apart needs no torch, so configs can be
checked before anything heavy is imported.
"""

from __future__ import annotations

from pathlib import Path


def is_model_folder(path: str | Path) -> bool:
    return (Path(path) / "config.json").is_file()


def not_a_model_folder(path: str | Path) -> str:
    """Why ``path`` cannot be loaded, and how to make one."""
    return f"{str(path)!r} is not a model folder (no config.json); build one with `arena train init-model {path}`"
