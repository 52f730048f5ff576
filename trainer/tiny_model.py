"""``arena train init-model``: a small causal language model built offline.

Nothing can be downloaded at run time, so the tiny model is built from a config (a
Qwen2-style decoder) and a byte-level BPE tokenizer trained here on the arena's own
texts: every game's rules, observations from random play, the prompt template and the
legal actions. Both are written with ``save_pretrained``, so the trainer, the ``llm``
bot and the tests load them through ``from_pretrained`` exactly as they would load a
real Qwen or Llama checkpoint.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import games
from arena.seats import Turn
from bots.prompts import build_prompt
from games.api import MAX_SEED
from trainer.checkpoints import save_model_folder

SPECIAL_TOKENS = {"bos_token": "<|bos|>", "eos_token": "<|eos|>", "pad_token": "<|pad|>"}

CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
"""A plain chat format: the tiny model has no pretrained one, and a real checkpoint brings its own."""


@dataclass(frozen=True)
class ModelSize:
    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int


SIZES: dict[str, ModelSize] = {
    "tiny": ModelSize(vocab=2048, hidden=64, layers=2, heads=4, kv_heads=2, intermediate=192),
    "small": ModelSize(vocab=4096, hidden=256, layers=4, heads=8, kv_heads=4, intermediate=768),
}


def corpus(*, matches_per_game: int = 3, seed: int = 0) -> Iterator[str]:
    """The texts the tokenizer learns from: rules, prompts and actions of random play.

    Each game is played a few times with uniformly random legal (or random free-form)
    actions; every turn contributes its full prompt, so the template's words, the
    observation vocabulary and the action names all become short token sequences.
    """
    rng = random.Random(seed)
    for game in games.all():
        yield game.spec.rules
        actions_seen: set[str] = set()
        for match in range(matches_per_game):
            state = game.new(game.Config(), seed=(seed * 1000 + match) % (MAX_SEED + 1))
            for _ in range(500):
                movers = state.to_move()
                if not movers:
                    break
                actions = {}
                for seat in movers:
                    turn = Turn.of(state, seat, match_id="corpus")
                    prompt = build_prompt(turn)
                    yield prompt.system
                    yield prompt.user
                    if turn.legal_actions is not None:
                        actions_seen.update(turn.legal_actions)
                        actions[seat] = rng.choice(turn.legal_actions)
                    else:
                        actions[seat] = game.random_free_action(turn.observation, rng)
                    yield f"[{actions[seat]}]"
                state.step(actions)
        # Replies are ``[action]``: seen often, each action becomes one token, so scoring
        # a legal set does not favour the actions that happen to be spelled in fewer tokens.
        for action in sorted(actions_seen):
            yield f"[{action}]\n" * 200


def train_tokenizer(vocab: int, *, seed: int = 0):  # -> PreTrainedTokenizerFast
    """A byte-level BPE tokenizer over ``corpus()``: any text round-trips, arena text is short."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=[*list(SPECIAL_TOKENS.values()), "<|system|>", "<|user|>", "<|assistant|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus(seed=seed), trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, **SPECIAL_TOKENS)
    fast.chat_template = CHAT_TEMPLATE
    fast.padding_side = "left"
    return fast


def init_model(out_dir: str | Path, *, size: str = "tiny", seed: int = 0) -> Path:
    """Build, randomly initialise (seeded) and save a model and its tokenizer in ``out_dir``."""
    if size not in SIZES:
        raise ValueError(f"unknown model size {size!r} (known: {', '.join(SIZES)})")
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    dims = SIZES[size]
    tokenizer = train_tokenizer(dims.vocab, seed=seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=dims.hidden,
        intermediate_size=dims.intermediate,
        num_hidden_layers=dims.layers,
        num_attention_heads=dims.heads,
        num_key_value_heads=dims.kv_heads,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    return save_model_folder(model, tokenizer, Path(out_dir))
