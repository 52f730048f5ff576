"""Iterated ultimatum: split a pie round after round, the proposer's offer taken or left.

The ultimatum game (Güth, Schmittberger and Schwarze 1982) is the classic test of
fairness against self-interest: a rational responder takes any positive offer, yet people
reject offers they find unfair, and proposers, knowing it, offer 40 to 50 percent.
Repeated with roles alternating, a rejection becomes a signal and a reputation, so it
tests whether an agent can make fair offers, punish unfair ones, and say why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from games import render
from games.api import Game, GameSpec, IllegalAction, Observation, View, first_shown, not_shown
from games.bargaining import (
    ACCEPT,
    MAX_AMOUNT,
    BargainingConfig,
    Said,
    chat,
    check_message,
    fitting_message,
    format_action,
    history_data,
    message_hint,
    messages_data,
    no_arguments,
    read_move,
    transcript,
    whole_numbers,
)

OFFER = "offer"
REJECT = "reject"
VERBS = (OFFER, ACCEPT, REJECT)
PROPOSE_PHASE = "offer"
RESPOND_PHASE = "respond"
OVER = "over"
ROUND = "round"
SAMPLE_MESSAGES: tuple[str, ...] = (
    "A fair split.",
    "Take it or leave it.",
    "Remember this next round.",
    "That is not fair.",
    "",
)
"""What a random player says with its action."""


@dataclass(frozen=True)
class IteratedUltimatumConfig(BargainingConfig):
    rounds: int = 6
    pie: int = 10

    def check(self) -> None:
        super().check()
        self.at_least("rounds", 1)
        self.bound_history("rounds", "message_chars")
        self.at_least("pie", 1)
        self.at_most("pie", MAX_AMOUNT)

    def return_bounds(self) -> tuple[float, float]:
        return (0.0, float(self.rounds * self.pie))


@dataclass(frozen=True)
class Result:
    """One finished round: who proposed, what the responder was offered, and whether it took it."""

    proposer: int
    offer: int
    accepted: bool

    def rewards(self, pie: int) -> tuple[float, float]:
        """(seat 0's reward, seat 1's reward) of the round."""
        if not self.accepted:
            return (0.0, 0.0)
        paid = {self.proposer: float(pie - self.offer), 1 - self.proposer: float(self.offer)}
        return (paid[0], paid[1])


def proposer_of(round_index: int) -> int:
    """Seat 0 proposes in the first round, then the roles alternate."""
    return round_index % 2


RULES = """\
Iterated ultimatum game between two players (seat 0 and seat 1), over a fixed number of \
rounds (6 by default; both know how many). Each round a pie of points (10 by default) \
is split. The roles alternate: seat 0 proposes in round 1, seat 1 in round 2, and so on. \
The proposer offers the responder a share, "offer <n>", a whole number from 0 to the pie, \
and keeps the rest. Then the responder answers "accept" or "reject". Accept: the \
responder gets n and the proposer the pie minus n. Reject: both get 0 for that round. \
Each round pays at once. Any action may end with a colon and a message to the other \
player, e.g. "offer 4: a fair split" or "reject: too little", unless the match turns \
messages off (your turn says so). Your goal is the highest \
total of your own over all rounds; it is not zero-sum. After each round both see what \
happened; the game ends after the last round."""


class IteratedUltimatum(Game):
    spec = GameSpec(
        name="iterated-ultimatum",
        title="Iterated ultimatum",
        category="negotiation",
        description="Split a pie each round, proposer and responder swapping roles; a rejection leaves both with nothing.",
        rules=RULES,
        default_config=IteratedUltimatumConfig(),
        free_text=True,
    )
    Config = IteratedUltimatumConfig

    config: IteratedUltimatumConfig
    round: int
    """Rounds completed so far (the 0-based index of the current round while live)."""
    offer: int | None
    """The current round's offer to the responder, once made."""
    results: list[Result]
    moves: list[Said]
    """Every move with its message, for the transcript."""

    def _setup(self) -> None:
        self.round = 0
        self.offer = None
        self.results = []
        self.moves = []

    def phase(self) -> str:
        if self.is_over:
            return OVER
        return PROPOSE_PHASE if self.offer is None else RESPOND_PHASE

    def mover(self) -> int:
        proposer = proposer_of(self.round)
        return proposer if self.offer is None else 1 - proposer

    def to_move(self) -> tuple[int, ...]:
        return () if self.is_over else (self.mover(),)

    def legal_actions(self, seat: int) -> Sequence[str] | None:
        if self.is_over or seat != self.mover():
            return ()
        return None

    def action_format(self, seat: int) -> str:
        hint = message_hint(self.config.message_chars)
        if self.offer is None:
            return f"'offer <n>' with the whole number from 0 to {self.config.pie} that the responder gets, {hint}"
        return f"'accept' or 'reject', {hint}"

    def parse(self, action: str) -> tuple[str, int | None, str]:
        """(verb, the offer for 'offer' else None, message), checking the action fits the phase."""
        pie = self.config.pie
        if self.offer is None:
            grammar = f"you propose this round: write 'offer <n>' with what the other player gets, 0 to {pie}"
        else:
            grammar = f"you respond to an offer of {self.offer}: write 'accept' or 'reject'"
        verb, args, message = read_move(action, VERBS, grammar)
        if (verb == OFFER) != (self.offer is None):
            raise IllegalAction(f"'{verb}' is not possible now; {grammar}")
        if verb != OFFER:
            no_arguments(verb, args)
            return verb, None, message
        number = whole_numbers(args, 1)
        if number is None:
            raise IllegalAction(f"an offer is 'offer' and one whole number (put any message after a colon); {grammar}")
        if number[0] > pie:
            raise IllegalAction(f"you cannot offer {number[0]}: the pie is {pie}")
        return verb, number[0], message

    def validate(self, seat: int, action: str) -> str:
        if self.is_over:
            raise IllegalAction("the game is over")
        mover = self.mover()
        if seat != mover:
            raise IllegalAction(f"it is seat {mover}'s turn, not seat {seat}'s")
        verb, offer, message = self.parse(action)
        check_message(message, self.config.message_chars)
        return format_action(verb if offer is None else f"{OFFER} {offer}", message)

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        seat = self.mover()
        verb, offer, message = self.parse(actions[seat])
        self.moves.append(Said(seat, self.round + 1, verb if offer is None else f"{OFFER} {offer}", message))
        if offer is not None:
            self.offer = offer
            return None
        assert self.offer is not None
        result = Result(proposer_of(self.round), self.offer, verb == ACCEPT)
        self.results.append(result)
        self.round += 1
        self.offer = None
        self.is_over = self.round == self.config.rounds
        return result.rewards(self.config.pie)

    # ---- rendering ---------------------------------------------------------------------

    def _current_round(self) -> int:
        return min(self.round + 1, self.config.rounds)

    def _result_line(self, number: int, result: Result, viewer: int | None) -> str:
        def name(seat: int) -> str:
            return "you" if seat == viewer else f"seat {seat}"

        paid = result.rewards(self.config.pie)
        outcome = "accepted" if result.accepted else "rejected"
        return (
            f"  round {number}: {name(result.proposer)} offered {result.offer} of {self.config.pie} "
            f"to {name(1 - result.proposer)}, {outcome} (seat 0 +{render.number(paid[0])}, seat 1 +{render.number(paid[1])})"
        )

    def _prompt(self, seat: int) -> str:
        if self.is_over:
            scores = self._returns
            return f"The game is over. Final score: you {render.number(scores[seat])}, them {render.number(scores[1 - seat])}."
        number = self.round + 1
        proposer = proposer_of(self.round)
        if self.offer is None:
            if seat == proposer:
                return f"Round {number}: you propose. Answer {self.action_format(seat)}."
            return f"Round {number}: seat {proposer} is making an offer to you."
        if seat == proposer:
            return f"Round {number}: you offered {self.offer}; seat {1 - seat} is deciding."
        return (
            f"Round {number}: seat {proposer} offers you {self.offer} of {self.config.pie} "
            f"(they would keep {self.config.pie - self.offer}). Answer {self.action_format(seat)}."
        )

    def _shown(self) -> tuple[int, list[Said]]:
        """The index of the first round shown one by one (``HISTORY_SHOWN``), and the moves from it on."""
        first = first_shown(len(self.results))
        return first, [said for said in self.moves if said.period > first]

    def observe(self, seat: int) -> Observation:
        cfg = self.config
        scores = self._returns
        first, moves = self._shown()
        results = [self._result_line(i + 1, r, seat) for i, r in enumerate(self.results[first:], start=first)]
        if first:
            earlier = [sum(r.rewards(cfg.pie)[s] for r in self.results[:first]) for s in (0, 1)]
            results.insert(
                0,
                f"  {not_shown(first)}: you {render.signed(earlier[seat])}, them {render.signed(earlier[1 - seat])} in all",
            )
        lines = [
            f"Iterated ultimatum, round {self._current_round()} of {cfg.rounds}. You are seat {seat}. "
            f"Each round splits a pie of {cfg.pie}; seat 0 proposes in odd rounds, seat 1 in even rounds.",
            f"Score so far: you {render.number(scores[seat])}, them {render.number(scores[1 - seat])}.",
            "Rounds played:",
            *(results or ["  (none yet)"]),
            *transcript(moves, seat, ROUND),
            self._prompt(seat),
        ]
        proposer = proposer_of(self.round)
        data: dict[str, Any] = {
            "seat": seat,
            "round": self._current_round(),
            "rounds": cfg.rounds,
            "pie": cfg.pie,
            "phase": self.phase(),
            "proposer": None if self.is_over else proposer,
            "role": None if self.is_over else ("proposer" if seat == proposer else "responder"),
            "offer": self.offer,
            "results": [
                {"round": i + 1, "proposer": r.proposer, "offer": r.offer, "accepted": r.accepted}
                for i, r in enumerate(self.results)
            ],
            "my_score": scores[seat],
            "their_score": scores[1 - seat],
            "message_chars": cfg.message_chars,
            "messages": messages_data(self.moves, ROUND),
            "history": history_data(self.moves, ROUND),
            "over": self.is_over,
        }
        return Observation(text="\n".join(lines), data=data)

    def _status(self) -> str:
        scores = self._returns
        if self.is_over:
            head = f"Game over after {render.count(self.config.rounds, 'round')}."
        elif self.offer is None:
            head = f"Round {self.round + 1} of {self.config.rounds}: seat {proposer_of(self.round)} to offer."
        else:
            head = f"Round {self.round + 1} of {self.config.rounds}: seat {self.mover()} to answer an offer of {self.offer}."
        return f"{head} Score: seat 0 {render.number(scores[0])}, seat 1 {render.number(scores[1])}."

    def public_view(self) -> View:
        """The latest ``HISTORY_SHOWN`` rounds, as the players' text shows them."""
        first, moves = self._shown()
        shown = list(enumerate(self.results))[first:]
        rows = [[f"{r.offer} {'yes' if r.accepted else 'no'}" for _, r in shown]]
        scores = self._returns
        return render.view(
            self._status(),
            render.facts(
                {
                    "round": f"{self._current_round()} of {self.config.rounds}",
                    "pie": self.config.pie,
                    "offer": "-" if self.offer is None else self.offer,
                    "seat 0": f"{render.number(scores[0])}",
                    "seat 1": f"{render.number(scores[1])}",
                }
            ),
            render.grid(
                rows,
                title="offers to the responder, accepted or not" + (f"; rounds before {first + 1} not shown" if first else ""),
                row_labels=("offer",),
                col_labels=[f"{i + 1} (seat {r.proposer})" for i, r in shown],
            ),
            chat(moves, ROUND),
            render.text("\n".join(transcript(moves, None, ROUND))),
        )

    def full_view(self) -> View:
        return self.public_view()

    @classmethod
    def random_free_action(cls, observation: Observation, rng: Any) -> str:
        data = observation.data
        offering = data["phase"] == PROPOSE_PHASE
        move = f"{OFFER} {rng.randrange(data['pie'] + 1)}" if offering else rng.choice((ACCEPT, REJECT))
        return format_action(move, fitting_message(rng.choice(SAMPLE_MESSAGES), data["message_chars"]))
