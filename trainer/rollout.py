"""Rollouts: matches played through ``arena.match.play_match`` by model policies.

A ``PolicySeat`` is the seat of a model in one match: it builds the prompt with the one
prompt template (``bots.prompts``), asks its policy's ``Batcher``, and remembers what
the loss needs about every answer it gave. ``play_rollouts`` plays a plan of matches N at
a time in one nursery (one batcher per model, learner and opponents alike) and turns each
result into ``Sample`` rows: one per accepted turn of a learner seat.

There is no second match loop: clocks, retries and forfeits are the arena's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

import games
from arena.match import CRASH, Clock, MatchResult, play_match
from arena.seats import LocalSeat, Move, Seat, Turn
from bots.prompts import build_prompt
from bots.registry import make_bot, seat_seed
from trainer.batcher import Batcher
from trainer.export import rewards_summing_to
from trainer.policy import Decision, Policy, Request

ROLLOUT_CLOCK = Clock(move_ms=600_000, grace_ms=60_000)
"""Rollouts wait for the batch: a seat never loses on time while the model is busy."""


@dataclass(frozen=True)
class Sample:
    """One accepted turn of a learner seat: everything the update and the estimators need.

    ``step`` is the turn's time for the estimators (``turn_times``), not the match step.

    ``logprobs`` are the reply's token log-probs as the store keeps them; ``options`` are the
    legal replies the turn was sampled among when it scored a legal set (empty when it
    generated, or when it came from the store, which keeps no such set), and
    ``choice_logprob`` the chosen reply's log-prob under that softmax.
    """

    match: int
    seed: int
    game: str
    seat: int
    step: int
    prompt_ids: tuple[int, ...]
    action_ids: tuple[int, ...]
    logprobs: tuple[float, ...]
    entropy: float | None
    reward: float
    opponent: str
    options: tuple[tuple[int, ...], ...] = ()
    choice_logprob: float | None = None

    @property
    def acting_logprobs(self) -> tuple[float, ...]:
        """The PPO ratio's "old" side, matching ``Policy.acting_logprobs``: one value per
        scored turn, one per token of a generated reply."""
        return (self.choice_logprob,) if self.options and self.choice_logprob is not None else self.logprobs


def mean_entropy(samples: Sequence[Sample]) -> float | None:
    """The mean entropy of the turns that have one; None when none has.

    Stored and generated turns carry no distribution over legal actions: counted as 0 they
    would drag the mean down with the share of such turns and pass for a policy collapse.
    """
    known = [s.entropy for s in samples if s.entropy is not None]
    return sum(known) / len(known) if known else None


@dataclass(frozen=True)
class SeatPlan:
    """Who sits in a seat: the learner, a model (``policy`` names one in the models
    mapping), or a registry bot spec."""

    kind: str  # "learner", "model" or "bot"
    name: str

    def __post_init__(self) -> None:
        if self.kind not in ("learner", "model", "bot"):
            raise ValueError(f"a seat is a learner, a model or a bot, not {self.kind!r}")


@dataclass(frozen=True)
class MatchPlan:
    index: int
    game: str
    seed: int
    seats: tuple[SeatPlan, ...]
    config: Mapping[str, Any] = field(default_factory=dict)

    @property
    def opponent(self) -> str:
        """Who the learner played: the other seats' names, or "self" in pure self-play."""
        others = sorted({seat.name for seat in self.seats if seat.kind != "learner"})
        return "+".join(others) if others else "self"


@dataclass
class Rollout:
    plan: MatchPlan
    result: MatchResult
    samples: list[Sample]

    def learner_seats(self) -> list[int]:
        return [seat for seat, who in enumerate(self.plan.seats) if who.kind == "learner"]


def request_for(policy: Policy, turn: Turn, key: tuple[int, ...]) -> tuple[Request, str]:
    """The policy's request for ``turn`` and the prompt as kept with the move (JSON messages)."""
    prompt = build_prompt(turn)
    return Request(policy.prompt_ids(prompt), turn.legal_actions, key), prompt.to_json()


def move_of(decision: Decision, request: Request, prompt: str) -> Move:
    """The move a model's decision makes, with what the store keeps for audit and training."""
    return Move(
        action=decision.action,
        raw=decision.reply,
        prompt=prompt,
        tokens_in=len(request.prompt_ids),
        tokens_out=len(decision.action_ids),
        logprobs=decision.logprobs,
        format_error=decision.action is None,
    )


class PolicySeat:
    """A model's seat in one match; sampling is keyed by (seed, match, step, seat, attempt)."""

    def __init__(self, policy: Policy, batcher: Batcher[Request, Decision], name: str, *, seed: int, match: int) -> None:
        self.policy = policy
        self.batcher = batcher
        self.name = name
        self.seed = seed
        self.match = match
        self.answers: dict[tuple[int, int], tuple[Request, Decision]] = {}

    async def start(self, info: Mapping[str, Any]) -> None:
        return None

    async def act(self, turn: Turn) -> Move:
        request, prompt = request_for(self.policy, turn, (self.seed, self.match, turn.step, turn.seat, turn.attempt))
        decision = await self.batcher.decide(request)
        self.answers[(turn.step, turn.attempt)] = (request, decision)
        return move_of(decision, request, prompt)

    async def end(self, result: Mapping[str, Any]) -> None:
        return None


def turn_times(game: str, steps: Sequence[int]) -> list[int]:
    """The time the estimators see (``TurnBatch.step``) of a seat's accepted turns, taken
    at the match ``steps`` in order: the round in a simultaneous game, the seat's own turn
    index k in a turn-based one or one whose rounds are staged (each seat once a round, at
    steps of its own: coalition-bargaining's proposal, then the votes). Seats of such games
    never share a match step, so Advantage Alignment would find no co-player turn in "the
    same round", and discounting by steps would count the co-players' turns as the seat's own.
    """
    spec = games.get(game).spec
    return list(steps) if spec.simultaneous and not spec.staged_rounds else list(range(len(steps)))


def samples_of(plan: MatchPlan, result: MatchResult, seats: Sequence[Seat]) -> list[Sample]:
    """The learner's accepted turns with their rewards.

    A seat's rewards are those the match credited to its turns, summing to its return
    (``rewards_summing_to``).
    """
    samples: list[Sample] = []
    for seat, who in enumerate(plan.seats):
        if who.kind != "learner":
            continue
        policy_seat = seats[seat]
        assert isinstance(policy_seat, PolicySeat)
        records = [t for t in result.turns if t.seat == seat and t.accepted]
        if not records:
            continue
        rewards = rewards_summing_to([record.reward for record in records], result.returns[seat])
        whens = turn_times(plan.game, [record.step for record in records])
        for record, reward, when in zip(records, rewards, whens, strict=True):
            request, decision = policy_seat.answers[(record.step, record.attempt)]
            samples.append(
                Sample(
                    match=plan.index,
                    seed=plan.seed,
                    game=plan.game,
                    seat=seat,
                    step=when,
                    prompt_ids=request.prompt_ids,
                    action_ids=decision.action_ids,
                    logprobs=decision.logprobs,
                    entropy=decision.entropy,
                    reward=reward,
                    opponent=plan.opponent,
                    options=decision.options,
                    choice_logprob=decision.choice_logprob,
                )
            )
    return samples


async def play_rollouts(
    plans: Sequence[MatchPlan],
    learner: Policy,
    *,
    models: Mapping[str, Policy] | None = None,
    seed: int = 0,
    concurrency: int = 16,
    max_retries: int = 2,
    max_batch: int = 64,
) -> list[Rollout]:
    """Play every planned match, ``concurrency`` at a time, and return them in plan order."""
    models = dict(models or {})
    batchers: dict[str, Batcher[Request, Decision]] = {
        name: Batcher(policy.decide, max_batch=max_batch) for name, policy in [("", learner), *models.items()]
    }
    rollouts: dict[int, Rollout] = {}
    limit = trio.Semaphore(concurrency)

    def seat_for(plan: MatchPlan, seat: int) -> Seat:
        who = plan.seats[seat]
        if who.kind == "bot":
            return LocalSeat(make_bot(who.name, plan.game, seat_seed(plan.seed, seat)), who.name, threaded=False)
        if who.kind == "model" and who.name not in models:
            raise KeyError(f"match {plan.index} seats model {who.name!r}, which was not loaded")
        key = "" if who.kind == "learner" else who.name
        policy = learner if key == "" else models[key]
        return PolicySeat(policy, batchers[key], who.name, seed=seed, match=plan.index)

    async def play(plan: MatchPlan) -> None:
        async with limit:
            seats = [seat_for(plan, seat) for seat in range(len(plan.seats))]
            result = await play_match(
                games.get(plan.game),
                seats,
                config=plan.config,
                seed=plan.seed,
                clock=ROLLOUT_CLOCK,
                max_retries=max_retries,
                match_id=f"rollout-{seed}-{plan.index}",
            )
            rollouts[plan.index] = Rollout(plan, result, samples_of(plan, result, seats))

    async with trio.open_nursery() as serving:
        for batcher in batchers.values():
            serving.start_soon(batcher.run)
        async with trio.open_nursery() as matches:
            for plan in plans:
                matches.start_soon(play, plan)
        serving.cancel_scope.cancel()
    played = [rollouts[plan.index] for plan in plans]
    for rollout in played:
        result = rollout.result
        if result.reason == CRASH and result.forfeit_seat is not None:
            who = rollout.plan.seats[result.forfeit_seat]
            name = "the learner" if who.kind == "learner" else f"{who.kind} {who.name!r}"
            raise SeatCrashed(f"{name} failed in a rollout of {rollout.plan.game} (seat {result.forfeit_seat}): {result.detail}")
    return played


class SeatCrashed(RuntimeError):
    """A seat's policy raised in a rollout: a model whose tokenizer does not fit its weights,
    memory run out, a bug. Forfeited as a crash, it made every match a loss for the learner
    (or a win, for an opponent's) with nothing to learn, and the run went on to a "final"
    checkpoint no better than its start."""
