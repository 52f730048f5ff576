"""A language-model policy: any causal LM loaded with ``from_pretrained``, acting in games.

Acting follows docs/TRAINING.md ("How a model acts"):

- a finite legal set no larger than ``score_limit`` is scored: every legal action's reply
  ``[action]`` + end-of-sequence is appended to the prompt, the log-probabilities of its
  tokens are summed, and an action is sampled from the softmax of those sums divided by
  the temperature. A random model therefore always plays legal moves;
- otherwise the policy generates a reply under a token budget and the reply is parsed
  (``bots.parsing``) like any language-model bot's.

Either way the chosen reply's per-token log-probabilities are returned (what the store
keeps), and so is the log-probability of what was actually sampled, which is what the PPO
ratio is taken against: for a scored set, the chosen action's under the softmax over the
legal set (the reply's raw token log-probs belong to another distribution: tokens every
legal reply shares, such as the brackets, cancel in that softmax); for a generated reply,
each token's under the tempered distribution it was drawn from. Randomness comes from a generator keyed by the request's
``key`` (seed, match, step, seat, attempt), never from shared state, so the actions of a
batch do not depend on which other requests happened to share it.

torch and transformers are imported here and in the other model modules of ``trainer/``
only.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import transformers
from packaging.version import Version
from safetensors import SafetensorError
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.utils import logging as hf_logging

from bots.parsing import extract_action
from bots.prompts import Prompt
from trainer.checkpoints import cannot_load, is_model_folder, save_model_folder

hf_logging.disable_progress_bar()


@dataclass(frozen=True)
class Request:
    """One turn to answer: the prompt's token ids, the legal actions (None: free-form),
    and the key of its sampling generator."""

    prompt_ids: tuple[int, ...]
    legal: tuple[str, ...] | None
    key: tuple[int, ...]


@dataclass(frozen=True)
class Decision:
    """The policy's answer: the action (None when a generated reply held none), the reply
    text and token ids, their log-probs under the model (the sampling temperature applied
    to generated tokens), and, when it scored a legal set, the probability it gave each
    legal action, their replies and the log-probability of the chosen one."""

    action: str | None
    reply: str
    action_ids: tuple[int, ...]
    logprobs: tuple[float, ...]
    choice_probs: tuple[float, ...] = ()
    options: tuple[tuple[int, ...], ...] = ()
    choice_logprob: float | None = None

    @property
    def entropy(self) -> float | None:
        """Entropy (nats) of the distribution over legal actions; None when generated, as
        a reply sampled token by token has no distribution over actions to measure."""
        if not self.choice_probs:
            return None
        return -sum(p * math.log(p) for p in self.choice_probs if p > 0)


Row = tuple[Sequence[int], Sequence[int]]
"""A prompt's token ids and a reply's."""

ActedTurn = tuple[Sequence[int], Sequence[int], Sequence[Sequence[int]]]
"""A prompt's token ids, the reply played, and the legal replies it was chosen among
(empty: the reply was generated)."""


def choice_logprobs(totals: torch.Tensor, temperature: float) -> torch.Tensor:
    """Log-probs of the legal actions under the acting policy: the softmax of their replies'
    summed token log-probs over the temperature. Acting and learning both call this, so the
    PPO ratio is taken between two policies of the one family actions are drawn from."""
    return torch.log_softmax(totals / temperature, dim=-1)


def padded_rows(rows: Sequence[Row], pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Left-padded ``prompt + reply`` rows: input ids, attention mask and position ids.

    Left padding puts every reply at the end of its row, so the logits needed are the last
    few positions of every row and the language-model head runs on those alone.
    """
    width = max(len(p) + len(a) for p, a in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(rows), width), dtype=torch.long)
    for i, (prompt, action) in enumerate(rows):
        n = len(prompt) + len(action)
        ids[i, width - n :] = torch.tensor([*prompt, *action], dtype=torch.long)
        attention[i, width - n :] = 1
    positions = (attention.cumsum(dim=1) - 1).clamp(min=0)
    return ids, attention, positions


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}

TRANSFORMERS_AT_LEAST = "5.24"
"""The first transformers whose API this module speaks: ``from_pretrained(dtype=)`` and the
model output's ``cache``. pyproject.toml's floor says the same."""

MIN_SHARED_PREFIX = 32
"""Below this many tokens a shared prefix is not worth a forward pass of its own."""


def shared_prefix(prompts: Sequence[Sequence[int]]) -> int:
    """How many leading tokens every prompt shares, keeping at least one token of each
    prompt out (the reply's first log-prob is read at the prompt's last position); 0 when
    that is too short to pay for itself."""
    first = prompts[0]
    n = min(len(p) for p in prompts) - 1
    for prompt in prompts[1:]:
        k = 0
        while k < n and prompt[k] == first[k]:
            k += 1
        n = k
    return n if n >= MIN_SHARED_PREFIX else 0


class Policy:
    """A model and its tokenizer, with the prompt format, scoring, generation and saving.

    ``forward_passes`` counts the model's batched forward passes (the batching test and
    the throughput benchmark read it). One lock serialises use of the model, so a policy
    can be shared by threads (the ``llm`` bot in several matches).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        device: str = "cpu",
        temperature: float = 1.0,
        score_limit: int = 64,
        score_batch: int = 64,
        max_new_tokens: int = 48,
    ) -> None:
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.model = model.to(device)
        self.tokenizer = tokenizer
        self.device = device
        self.temperature = temperature
        self.score_limit = score_limit
        self.score_batch = score_batch
        self.max_new_tokens = max_new_tokens
        self.forward_passes = 0
        self.lock = threading.RLock()
        if tokenizer.eos_token_id is None:
            raise ValueError("the tokenizer has no end-of-sequence token; a reply could never end")
        self.eos_id: int = tokenizer.eos_token_id
        self.pad_id: int = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.eos_id
        self._action_ids: dict[str, tuple[int, ...]] = {}

    @classmethod
    def load(cls, path: str | Path, *, device: str = "cpu", dtype: str = "float32", **options: Any) -> Policy:
        """Load a ``from_pretrained`` folder: the tiny model, a trainer checkpoint or a real one.

        ``dtype`` is the weights' type: ``bfloat16`` halves a real checkpoint's memory on a GPU.
        """
        if dtype not in DTYPES:
            raise ValueError(f"unknown dtype {dtype!r}; choose {', '.join(DTYPES)}")
        if Version(transformers.__version__) < Version(TRANSFORMERS_AT_LEAST):
            # older ones load the model, and every reply then failed inside the match (a forfeit each)
            raise RuntimeError(
                f"the trainer and the llm bot need transformers {TRANSFORMERS_AT_LEAST} or newer, this is"
                f" {transformers.__version__}: pip install --upgrade 'selfplay-arena[train]'"
            )
        folder = Path(path)
        if (problem := cannot_load(folder)) is not None:
            raise (ValueError if is_model_folder(folder) else FileNotFoundError)(problem)
        # a save or a download cut short: neither error is an OSError, nor says which file it read
        try:
            tokenizer = AutoTokenizer.from_pretrained(folder)
        except json.JSONDecodeError as error:
            raise OSError(f"{folder}: cannot read its tokenizer ({error}); was a save or a download cut short?") from None
        try:
            model = AutoModelForCausalLM.from_pretrained(folder, dtype=DTYPES[dtype])
        except SafetensorError as error:
            raise OSError(f"{folder}: cannot read its weights ({error}); was a save or a download cut short?") from None
        except (KeyError, ValueError) as error:
            if "model type" not in str(error):  # transformers' five lines on an architecture it does not know
                raise
            raise OSError(
                f"{folder}: this transformers ({transformers.__version__}) does not know the model_type its"
                " config.json names; a newer transformers may"
            ) from None
        except RuntimeError as error:
            if "ignore_mismatched_sizes" not in str(error):  # transformers' words for weights of other shapes
                raise
            raise OSError(
                f"{folder}: its weights do not fit its config.json (the shapes above differ); was the config"
                " changed, or copied from another model?"
            ) from None
        rows = model.get_input_embeddings().num_embeddings
        # a token past the rows fails at its first use, mid-run ("index out of range in self"); the
        # base vocabulary, as special tokens a tokenizer adds as it loads may lie past the rows unused
        if tokenizer.vocab_size > rows:
            raise OSError(
                f"{folder}: its tokenizer's vocabulary has {tokenizer.vocab_size} tokens and its model's embeddings"
                f" {rows} rows; is the tokenizer another model's?"
            )
        model.eval()
        return cls(model, tokenizer, device=device, **options)

    def save(self, path: str | Path) -> Path:
        with self.lock:
            return save_model_folder(self.model, self.tokenizer, Path(path))

    # ---- text <-> tokens -----------------------------------------------------------------

    def prompt_ids(self, prompt: Prompt) -> tuple[int, ...]:
        """The prompt as the model expects it: its chat template when it has one."""
        if getattr(self.tokenizer, "chat_template", None):
            ids = self.tokenizer.apply_chat_template(prompt.messages(), add_generation_prompt=True, tokenize=True)
            if isinstance(ids, dict) or hasattr(ids, "keys"):
                ids = ids["input_ids"]
            return tuple(int(i) for i in ids)
        text = f"{prompt.system}\n\n{prompt.user}\n\nAnswer: "
        return tuple(self.tokenizer(text, add_special_tokens=True)["input_ids"])

    def action_ids(self, action: str) -> tuple[int, ...]:
        """The reply that plays ``action``: ``[action]`` then end-of-sequence."""
        ids = self._action_ids.get(action)
        if ids is None:
            ids = (*self.tokenizer(f"[{action}]", add_special_tokens=False)["input_ids"], self.eos_id)
            self._action_ids[action] = ids
        return ids

    # ---- log-probs -------------------------------------------------------------------------

    def reply_logprobs(
        self, rows: Sequence[Row], *, grad: bool = False, temperature: float = 1.0
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-token log-probs of each row's reply given its prompt, in one forward pass,
        under the model's logits divided by ``temperature``.

        Returns a [rows, longest reply] tensor, left-aligned per row, and its mask. With
        ``grad`` the graph is kept (the update); without, it runs under ``no_grad`` (acting).

        The prompts of one game share a long head (the system message with the rules):
        that shared prefix runs once and its cache is repeated for every row, so a batch
        costs its rows' distinct tails only. Pads sit between the prefix and each tail,
        masked out, with positions counted past them, so the result is the plain forward
        pass's.
        """
        shared = shared_prefix([prompt for prompt, _ in rows])
        tails = [(prompt[shared:], reply) for prompt, reply in rows]
        ids, attention, positions = (t.to(self.device) for t in padded_rows(tails, self.pad_id))
        width = max(len(a) for _, a in rows)
        with torch.set_grad_enabled(grad):
            cache = None
            if shared:
                head = torch.tensor([rows[0][0][:shared]], dtype=torch.long, device=self.device)
                cache = self.model(input_ids=head, use_cache=True, logits_to_keep=1).cache
                cache.batch_repeat_interleave(len(rows))
                attention = torch.cat([torch.ones((len(rows), shared), dtype=attention.dtype, device=self.device), attention], 1)
                positions = positions + shared
            logits = self.model(
                input_ids=ids, attention_mask=attention, position_ids=positions, cache=cache, logits_to_keep=width + 1
            ).logits
            logp = torch.log_softmax(logits[:, :-1].float() / temperature, dim=-1)
            logp = logp.gather(-1, ids[:, -width:].unsqueeze(-1)).squeeze(-1)
        self.forward_passes += 1
        lengths = torch.tensor([len(a) for _, a in rows], device=logp.device)
        # Row i's reply is its last lengths[i] columns: shift it to the left edge.
        columns = (torch.arange(width, device=logp.device).unsqueeze(0) + (width - lengths).unsqueeze(1)) % width
        mask = torch.arange(width, device=logp.device).unsqueeze(0) < lengths.unsqueeze(1)
        return logp.gather(1, columns) * mask, mask

    def score(self, rows: Sequence[Row]) -> list[list[float]]:
        """Each row's reply token log-probs, in chunks of ``score_batch`` rows."""
        out: list[list[float]] = []
        with self.lock, torch.no_grad():
            for start in range(0, len(rows), self.score_batch):
                chunk = rows[start : start + self.score_batch]
                logp, mask = self.reply_logprobs(chunk)
                out.extend(logp[i][mask[i]].tolist() for i in range(len(chunk)))
        return out

    def acting_logprobs(self, turns: Sequence[ActedTurn], *, grad: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """Log-probs of what each turn sampled, under the distribution acting samples from.

        A scored turn gives one value, its reply's log-prob under ``choice_logprobs`` over its
        legal replies (every one of them is run); a generated turn gives one per reply token
        at the sampling temperature. Returns a [turns, longest] tensor, left-aligned, and its
        mask, like ``reply_logprobs``. At most two forward passes: scored rows and generated
        rows need different temperatures on the logits.
        """
        scored = [i for i, (_, _, options) in enumerate(turns) if options]
        generated = [i for i, (_, _, options) in enumerate(turns) if not options]
        values: dict[int, torch.Tensor] = {}
        if scored:
            rows = [(turns[i][0], option) for i in scored for option in turns[i][2]]
            totals = self.reply_logprobs(rows, grad=grad)[0].sum(dim=1)
            start = 0
            for i in scored:
                _, reply, options = turns[i]
                choice = [tuple(option) for option in options].index(tuple(reply))
                values[i] = choice_logprobs(totals[start : start + len(options)], self.temperature)[choice : choice + 1]
                start += len(options)
        if generated:
            logp, _ = self.reply_logprobs([turns[i][:2] for i in generated], grad=grad, temperature=self.temperature)
            values.update((i, logp[row, : len(turns[i][1])]) for row, i in enumerate(generated))
        width = max(len(v) for v in values.values())
        out = torch.stack([torch.nn.functional.pad(values[i], (0, width - len(values[i]))) for i in range(len(turns))])
        mask = torch.arange(width, device=out.device).unsqueeze(0) < torch.tensor(
            [len(values[i]) for i in range(len(turns))], device=out.device
        ).unsqueeze(1)
        return out, mask

    # ---- acting ----------------------------------------------------------------------------

    def decide(self, requests: Sequence[Request]) -> list[Decision]:
        """Answer a batch of requests: every scored legal set in shared forward passes,
        then every generated reply, together, token by token."""
        scored = [r for r in requests if r.legal is not None and 0 < len(r.legal) <= self.score_limit]
        rows = [(r.prompt_ids, self.action_ids(a)) for r in scored for a in r.legal or ()]
        token_logps = iter(self.score(rows)) if rows else iter(())
        by_request: dict[int, Decision] = {}
        for request in scored:
            options = [(action, next(token_logps)) for action in request.legal or ()]
            by_request[id(request)] = self._sample(request, options)
        generated = [r for r in requests if id(r) not in by_request]
        if generated:
            by_request.update(zip(map(id, generated), self._generate(generated), strict=True))
        return [by_request[id(r)] for r in requests]

    def _sample(self, request: Request, options: list[tuple[str, list[float]]]) -> Decision:
        logp = choice_logprobs(torch.tensor([sum(lp) for _, lp in options], dtype=torch.float64), self.temperature)
        probs = logp.exp().numpy()
        rng = np.random.default_rng(list(request.key))
        index = int(rng.choice(len(options), p=probs / probs.sum()))
        action, logprobs = options[index]
        return Decision(
            action,
            f"[{action}]",
            self.action_ids(action),
            tuple(logprobs),
            tuple(float(p) for p in probs),
            tuple(self.action_ids(a) for a, _ in options),
            float(logp[index]),
        )

    def _generate(self, requests: Sequence[Request]) -> list[Decision]:
        """Sample every request's reply token by token under the token budget, all of them
        in each forward pass over one cache (prompts left-padded). Each row draws from its
        own keyed generator, so a reply does not depend on what else was in the batch."""
        generators = [torch.Generator().manual_seed(int(np.random.default_rng(list(r.key)).integers(2**62))) for r in requests]
        replies: list[list[int]] = [[] for _ in requests]
        logprobs: list[list[float]] = [[] for _ in requests]
        with self.lock, torch.no_grad():
            rows = [(r.prompt_ids, ()) for r in requests]
            tokens, attention, positions = (t.to(self.device) for t in padded_rows(rows, self.pad_id))
            cache = None
            for _ in range(self.max_new_tokens):
                output = self.model(
                    input_ids=tokens,
                    attention_mask=attention,
                    position_ids=positions,
                    cache=cache,
                    use_cache=True,
                    logits_to_keep=1,
                )
                self.forward_passes += 1
                cache = output.cache
                logp = torch.log_softmax(output.logits[:, -1].float() / self.temperature, dim=-1)
                probs = logp.exp().cpu()
                step = []
                for i, generator in enumerate(generators):
                    done = bool(replies[i]) and replies[i][-1] == self.eos_id
                    token = self.pad_id if done else int(torch.multinomial(probs[i], 1, generator=generator))
                    if not done:
                        replies[i].append(token)
                        logprobs[i].append(float(logp[i, token]))
                    step.append(token)
                if all(reply[-1] == self.eos_id for reply in replies):
                    break
                tokens = torch.tensor(step, dtype=torch.long, device=self.device).unsqueeze(1)
                attention = torch.cat([attention, torch.ones_like(tokens)], dim=1)
                positions = positions[:, -1:] + 1
        decisions = []
        for ids, lps in zip(replies, logprobs, strict=True):
            reply = self.tokenizer.decode(ids, skip_special_tokens=True)
            decisions.append(Decision(extract_action(reply), reply, tuple(ids), tuple(lps)))
        return decisions
