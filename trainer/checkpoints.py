"""What a model folder is, for every part that takes one (the policy, configs, the nightly).

A model folder is what ``save_pretrained`` writes: the trainer's checkpoints, the tiny
model, a downloaded real checkpoint. Telling one apart needs no torch, so configs can be
checked before anything heavy is imported. A config.json alone is not enough: a training
run's folder has one too, and transformers, asked to load it, blames a missing
sentencepiece instead of saying the folder holds no model.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")
"""The files ``save_pretrained`` writes the weights to (one file, or an index of shards)."""

TOKENIZER = ("tokenizer.json", "tokenizer.model", "vocab.json")
"""Any one of them is a tokenizer ``AutoTokenizer`` can load without converting."""


def _missing(folder: Path) -> list[str]:
    parts = {"config.json": ("config.json",), "weights": WEIGHTS, "tokenizer files": TOKENIZER}
    return [what for what, names in parts.items() if not any((folder / name).is_file() for name in names)]


def is_model_folder(path: str | Path) -> bool:
    return not _missing(Path(path))


CAUSAL = ("ForCausalLM", "LMHeadModel")
"""How the architectures that write text one token after another end their names."""


def not_causal(path: str | Path) -> str | None:
    """Why the model in a model folder cannot write replies, from its config.json (None if it
    can, or says nothing): an encoder such as BERT loaded with a fresh head and failed at its
    first reply, after the run had started."""
    try:
        config = json.loads((Path(path) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):  # a missing or broken config.json is said where the model loads
        return None
    names = [str(name) for name in config.get("architectures") or []] if isinstance(config, dict) else []
    kind = ", ".join(names) or (config.get("model_type") if isinstance(config, dict) else None) or "model"
    if isinstance(config, dict) and config.get("is_encoder_decoder"):
        return f"{str(path)!r} holds an encoder-decoder {kind}, not a causal language model"
    if names and not any(name.endswith(CAUSAL) for name in names):
        return f"{str(path)!r} holds a {kind}, not a causal language model (an architecture named *ForCausalLM or *LMHeadModel)"
    return None


def _holds_part_of_a_model(folder: Path) -> bool:
    """Some of a model's files, as a save or a copy cut short leaves them: its weights or
    tokenizer, or a config.json of a model (a training run's own config.json names none)."""
    if any((folder / name).is_file() for name in (*WEIGHTS, *TOKENIZER)):
        return True
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and ("model_type" in config or "architectures" in config)


def cannot_load(path: str | Path) -> str | None:
    """Why the folder holds no model that writes replies, found without importing torch; None
    when it looks like one."""
    return not_a_model_folder(path) if not is_model_folder(path) else not_causal(path)


def not_a_model_folder(path: str | Path) -> str:
    """Why ``path`` cannot be loaded, and where a model might be instead."""
    folder = Path(path)
    final = folder / "checkpoints" / "final"
    if is_model_folder(final):
        instead = f"it looks like a training run: its trained model is {str(final)!r}"
    elif _holds_part_of_a_model(folder):  # init-model there would put a random one under its name
        instead = "was its save cut short, or a copy? save or copy it again whole"
    elif folder.is_dir() and any(folder.iterdir()):
        instead = "name the folder that holds a model's config.json, weights and tokenizer files"
    else:
        instead = f"build one with `arena train init-model {path}`"
    if folder.is_file():
        return f"{str(path)!r} is a file, not a model folder saved by save_pretrained: name the folder holding config.json"
    missing = "no such folder" if not folder.is_dir() else ", ".join(f"no {what}" for what in _missing(folder))
    return f"{str(path)!r} is not a model folder saved by save_pretrained ({missing}); {instead}"


def save_model_folder(model: Any, tokenizer: Any, out: Path) -> Path:
    """Write a model folder with ``save_pretrained``, quietly and readable as the folder's other files.

    transformers draws a "Writing model shards" bar on stderr at every save (through the
    trainer's own progress line), and writes the weights owner-only (0600) while everything
    else takes the umask's mode (0644): a server or bot run as another user could read the
    config but not the weights. The weights take the mode of the config.json written beside them.
    A save that fails, or is interrupted (Ctrl-C), removes the folder it made: a config
    without weights passed for a checkpoint, and a run stopped as it saved ``final`` said it had
    none while a half-written one lay there (found by a QA helper).
    """
    from safetensors import SafetensorError
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # as loading a Policy does: the arena draws its own
    made = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
        mode = (out / "config.json").stat().st_mode & 0o777
        for name in WEIGHTS:
            for weights in out.glob(name.replace("model", "model*", 1)):
                weights.chmod(mode)
    except BaseException as error:
        if made:
            shutil.rmtree(out, ignore_errors=True)
        if isinstance(error, (OSError, SafetensorError)):  # a full disk: one line
            raise OSError(f"cannot save the model folder {out}: {error}") from error
        raise
    return out
