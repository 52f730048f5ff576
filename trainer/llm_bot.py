"""The ``llm`` bot: a local transformers model (any ``from_pretrained`` folder) as a registry bot.

``llm:model=DIR[,device=cpu][,temperature=1.0][,max_new_tokens=48][,score_limit=64]`` seats a
model wherever a bot spec is accepted: ``arena play``, tournaments, ``arena bot run``. It acts
exactly as the trainer's rollouts do (``trainer.rollout.request_for`` and ``move_of``): a legal set
of at most ``score_limit`` actions is scored, anything else is generated under
``max_new_tokens`` and parsed, and the move carries the prompt, the raw reply, the token counts
and the reply's log-probs, so a match played live can be trained on from the store.

The registry loads the ``arena.bots`` entry points whenever bots are listed or looked up, so this
module imports neither torch nor the policy at import time: ``arena bots`` and ``arena serve``
stay light, and torch is loaded by the first ``llm`` bot built.

Loading a model costs seconds and its memory, and a runner builds one bot per seat of every
match, so loaded policies are shared by the whole process, one per (model folder, device,
temperature, token budget, score limit), with one ``ThreadBatcher``: the turns of matches
played at once (a tournament's concurrency, ``arena bot run`` in several matches) share
forward passes, as the trainer's rollouts do.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from arena.seats import Move, Turn
from bots.base import Bot
from bots.registry import BotSpecError
from trainer.checkpoints import cannot_load
from trainer.device import check_device as check_torch_device

if TYPE_CHECKING:
    from trainer.batcher import ThreadBatcher
    from trainer.policy import Decision, Policy, Request

_PolicyKey = tuple[Path, str, float, int, int]
_policies: dict[_PolicyKey, tuple[Policy, ThreadBatcher[Request, Decision]]] = {}
_policies_lock = threading.Lock()


def check_device(device: str) -> None:
    """Refuse a device torch cannot use before seconds go into loading the model for it."""
    try:
        check_torch_device(device)
    except ValueError as error:
        raise BotSpecError(f"bot 'llm': {error}") from None


def shared_policy(
    model: Path, device: str, temperature: float, max_new_tokens: int, score_limit: int
) -> tuple[Policy, ThreadBatcher[Request, Decision]]:
    """The process's one policy for these settings and its batcher, loaded on first use.

    The lock is held while loading, so two matches starting together (``arena bot run``
    builds its bots in worker threads) load the model once, not twice.
    """
    from trainer.batcher import ThreadBatcher
    from trainer.policy import Policy

    key = (model, device, temperature, max_new_tokens, score_limit)
    with _policies_lock:
        shared = _policies.get(key)
        if shared is None:
            policy = Policy.load(
                model, device=device, temperature=temperature, max_new_tokens=max_new_tokens, score_limit=score_limit
            )
            shared = _policies[key] = (policy, ThreadBatcher(policy.decide))
        return shared


def check_settings(temperature: float = 1.0, max_new_tokens: int = 48, score_limit: int = 64) -> None:
    """The bot's checks that need no model, shared with the nightly file's ``bot_options``, so
    that a bad value stops a night before it trains rather than when its tournament starts."""
    if temperature <= 0:
        raise BotSpecError(f"bot 'llm': temperature must be > 0, got {temperature}")
    if max_new_tokens <= 0:
        raise BotSpecError(f"bot 'llm': max_new_tokens must be > 0, got {max_new_tokens}")
    if score_limit < 0:
        raise BotSpecError(f"bot 'llm': score_limit must be >= 0, got {score_limit}")


class LLMBot(Bot):
    name = "llm"
    description = (
        "A local transformers model (model=DIR, any from_pretrained folder), acting as the trainer does: "
        "scores the legal actions, else generates a reply."
    )
    games = None

    def __init__(
        self,
        game: str,
        seed: int = 0,
        model: str = "",
        device: str = "cpu",
        temperature: float = 1.0,
        max_new_tokens: int = 48,
        score_limit: int = 64,
    ) -> None:
        super().__init__(game, seed)
        if not model:
            raise BotSpecError("bot 'llm' needs model=DIR, a from_pretrained folder (e.g. llm:model=ckpt/7,device=cpu)")
        check_settings(temperature, max_new_tokens, score_limit)
        # Keys of numpy's generators must be non-negative.
        self.seed = seed % 2**64
        folder = Path(model).expanduser().resolve()
        # Said before torch is imported, which takes seconds. A model this process holds is not
        # looked for again: a training run deletes old checkpoints, and a bot run playing one
        # would have failed every match it started from then on.
        loaded = any(key[0] == folder for key in _policies)
        if not loaded and (problem := cannot_load(folder)) is not None:
            raise BotSpecError(f"bot 'llm': cannot load model {model!r}: {problem}")
        check_device(device)
        try:
            self.policy, self.batcher = shared_policy(folder, device, temperature, max_new_tokens, score_limit)
        except (OSError, ValueError) as error:  # no such folder, or not a model
            raise BotSpecError(f"bot 'llm': cannot load model {model!r}: {error}") from None

    def act(self, turn: Turn) -> Move:
        """Blocking (a forward pass or a generation): LocalSeat and the SDK run it in a worker thread.

        The draw is keyed by the bot's seed, which the runner derives from the match seed and
        the seat, and the turn; never by the match id, which ``arena play`` and tournaments
        make up afresh for every match, so a seeded match replays. Each request draws from
        its own generator, so batching with other matches' turns changes nothing.
        """
        from trainer.rollout import move_of, request_for

        key = (self.seed, turn.step, turn.seat, turn.attempt)
        request, prompt = request_for(self.policy, turn, key)
        decision = self.batcher.decide(request)
        return move_of(decision, request, prompt)
