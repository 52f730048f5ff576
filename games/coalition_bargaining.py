"""Coalition bargaining: divide a shrinking pie by majority vote, proposers taking turns.

The legislative bargaining model of Baron and Ferejohn (1989): a proposer offers a
division, everyone votes, a majority passes it; a failure costs everyone, since the pie
shrinks before the next proposer tries. In equilibrium the proposer buys the cheapest
majority, paying each member just what it expects if the vote fails, and keeps the rest.
It tests coalition building, pricing votes, and persuading several players at once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from games import render
from games.api import ConfigError, Game, GameSpec, IllegalAction, Observation, View
from games.bargaining import (
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

PROPOSE = "propose"
YES = "yes"
NO = "no"
VERBS = (PROPOSE, YES, NO)
PROPOSE_PHASE = "propose"
VOTE_PHASE = "vote"
OVER = "over"
ROUND = "round"
MAX_ROUNDS = 100
"""Every pie is worked out at the start and listed in the rules and each observation: a
billion rounds took two minutes to set up, the server's whole loop frozen meanwhile."""
SAMPLE_MESSAGES: tuple[str, ...] = (
    "Vote yes and we all gain.",
    "This is the best you will get.",
    "Who will join me?",
    "I expect a bigger share.",
    "",
)
"""What a random player says with its action."""


@dataclass(frozen=True)
class CoalitionBargainingConfig(BargainingConfig):
    players: int = 3
    pie: int = 100
    shrink: float = 0.9
    max_rounds: int = 5

    def check(self) -> None:
        super().check()
        self.at_least("pie", 1)
        self.at_most("pie", MAX_AMOUNT)
        if not 0.0 < self.shrink <= 1.0:
            raise ConfigError(f"config key 'shrink' must be above 0 and at most 1, got {self.shrink}")
        self.at_least("max_rounds", 1)
        self.at_most("max_rounds", MAX_ROUNDS)
        self.bound_history("max_rounds", "message_chars")

    def return_bounds(self) -> tuple[float, float]:
        return (0.0, float(self.pie))

    def pies(self) -> tuple[int, ...]:
        """The pie of every round: each is the last times ``shrink``, rounded down. The shrink
        is read as the decimal it was written as (0.29 is 29/100), so 100 x 0.29 gives 29, and
        a pie of 41943050 x 0.7 gives 29360135, as a player works them out; a fixed slack
        before rounding in floating point was too small for pies of tens of millions."""
        shrink = Fraction(repr(self.shrink))
        pies = [self.pie]
        for _ in range(self.max_rounds - 1):
            pies.append(math.floor(pies[-1] * shrink))
        return tuple(pies)

    def majority(self) -> int:
        """The yes votes a proposal needs: a strict majority of all players."""
        return self.players // 2 + 1


@dataclass(frozen=True)
class Vote:
    """One round's proposal and how every seat voted on it (the proposer's yes included)."""

    proposer: int
    pie: int
    shares: tuple[int, ...]
    votes: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return self.votes.count(YES) > len(self.votes) // 2


def proposer_of(round_index: int, players: int) -> int:
    """Seat 0 proposes first, then the seats in order, round after round."""
    return round_index % players


RULES = """\
Coalition bargaining (after Baron and Ferejohn 1989). Three to five players (3 by \
default) divide a pie of points (100 by default) by majority vote, over at most a fixed \
number of rounds (5 by default). In each round one player proposes, seat 0 in round 1, \
then seat 1, and so on in seat order. The proposer writes a division: "propose" and \
one whole-number share per seat, in seat order, adding up to exactly this round's pie, \
e.g. "propose 40 30 30". Then every other player votes at the same time, "yes" or "no", \
without seeing the others' votes. The proposer's own vote counts as yes. The proposal \
passes with a strict majority of all players (2 of 3, 3 of 4, 3 of 5): the game ends and \
each player scores its share. If it fails, the pie shrinks (multiplied by 0.9 by default \
and rounded down: 100, 90, 81, 72, 64) and the next player proposes. If the last round's \
proposal fails, everyone scores 0. Any action may end with a colon and a message to \
the others, e.g. "propose 50 50 0: seat 1, join me" or "no: give me more", unless the match turns \
messages off (your turn says so). Your goal is \
the highest score of your own."""


class CoalitionBargaining(Game):
    spec = GameSpec(
        name="coalition-bargaining",
        title="Coalition bargaining",
        category="negotiation",
        description="Propose a split, win a majority before the pie shrinks: buy the cheapest coalition.",
        rules=RULES,
        default_config=CoalitionBargainingConfig(),
        min_players=3,
        max_players=5,
        simultaneous=True,
        free_text=True,
        staged_rounds=True,
    )
    Config = CoalitionBargainingConfig

    config: CoalitionBargainingConfig
    round: int
    """Rounds finished so far (the 0-based index of the current round while live)."""
    proposal: tuple[int, ...] | None
    """The shares on the table in the current round, once proposed."""
    votes: list[Vote]
    moves: list[Said]
    """Every move with its message, for the transcript."""
    _pies: tuple[int, ...]

    def _setup(self) -> None:
        self.round = 0
        self.proposal = None
        self.votes = []
        self.moves = []
        self._pies = self.config.pies()

    def current_round(self) -> int:
        """The round being played, counted from 1; once over, the last one played."""
        return len(self.votes) if self.is_over else self.round + 1

    def pie(self) -> int:
        return self._pies[self.current_round() - 1]

    def proposer(self) -> int:
        return proposer_of(self.round, self.num_players)

    def phase(self) -> str:
        if self.is_over:
            return OVER
        return PROPOSE_PHASE if self.proposal is None else VOTE_PHASE

    def to_move(self) -> tuple[int, ...]:
        if self.is_over:
            return ()
        proposer = self.proposer()
        if self.proposal is None:
            return (proposer,)
        return tuple(seat for seat in range(self.num_players) if seat != proposer)

    def legal_actions(self, seat: int) -> Sequence[str] | None:
        return None if seat in self.to_move() else ()

    def action_format(self, seat: int) -> str:
        hint = message_hint(self.config.message_chars)
        if self.proposal is None:
            return (
                f"'propose' and {self.num_players} whole-number shares, one per seat in seat order, adding up to "
                f"{self.pie()}, {hint}"
            )
        return f"'yes' or 'no', {hint}"

    def parse(self, action: str) -> tuple[str, tuple[int, ...] | None, str]:
        """(verb, the shares for 'propose' else None, message), checking the action fits the phase."""
        players, pie = self.num_players, self.pie()
        if self.proposal is None:
            grammar = f"you propose this round: write 'propose' and {players} shares adding up to {pie}"
        else:
            grammar = "vote on the proposal: write 'yes' or 'no'"
        verb, args, message = read_move(action, VERBS, grammar)
        if (verb == PROPOSE) != (self.proposal is None):
            raise IllegalAction(f"'{verb}' is not possible now; {grammar}")
        if verb != PROPOSE:
            no_arguments(verb, args)
            return verb, None, message
        shares = whole_numbers(args, players)
        if shares is None:
            raise IllegalAction(
                f"a proposal is 'propose' and {players} whole numbers, the share of each seat from seat 0 to seat "
                f"{players - 1} (put any message after a colon); {grammar}"
            )
        if sum(shares) != pie:
            raise IllegalAction(f"the shares add up to {sum(shares)}, but the pie this round is {pie}")
        return verb, shares, message

    def validate(self, seat: int, action: str) -> str:
        if self.is_over:
            raise IllegalAction("the game is over")
        movers = self.to_move()
        if seat not in movers:
            waiting = f"seat {movers[0]} to propose" if self.proposal is None else "the other seats to vote"
            raise IllegalAction(f"it is not seat {seat}'s turn: waiting for {waiting}")
        verb, shares, message = self.parse(action)
        check_message(message, self.config.message_chars)
        return format_action(_move(verb, shares), message)

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        number = self.round + 1
        parsed = {seat: self.parse(action) for seat, action in sorted(actions.items())}
        for seat, (verb, shares, message) in parsed.items():
            self.moves.append(Said(seat, number, _move(verb, shares), message))
        if self.proposal is None:
            self.proposal = parsed[self.proposer()][1]
            return None
        proposer = self.proposer()
        votes = tuple(YES if seat == proposer else parsed[seat][0] for seat in range(self.num_players))
        vote = Vote(proposer, self.pie(), self.proposal, votes)
        self.votes.append(vote)
        self.proposal = None
        self.round += 1
        if vote.passed:
            self.is_over = True
            return tuple(float(share) for share in vote.shares)
        self.is_over = self.round == self.config.max_rounds
        return None

    def shares(self) -> tuple[int, ...] | None:
        """The division that passed, once one has."""
        return self.votes[-1].shares if self.votes and self.votes[-1].passed else None

    # ---- rendering ---------------------------------------------------------------------

    def _round_line(self, number: int, vote: Vote, viewer: int | None) -> str:
        def name(seat: int) -> str:
            return "you" if seat == viewer else f"seat {seat}"

        shares = ", ".join(f"{name(s)} {share}" for s, share in enumerate(vote.shares))
        ballots = ", ".join(f"{name(s)} {v}" for s, v in enumerate(vote.votes))
        outcome = "passed" if vote.passed else "failed"
        return f"  round {number} (pie {vote.pie}): {name(vote.proposer)} proposed {shares}; votes: {ballots}; {outcome}"

    def _end_text(self, viewer: int | None) -> str:
        shares = self.shares()
        if shares is None:
            return f"No agreement in {self.config.max_rounds} rounds: everyone scores 0."
        scores = ", ".join(f"{'you' if s == viewer else f'seat {s}'} {share}" for s, share in enumerate(shares))
        return f"Agreement in round {len(self.votes)}: {scores}."

    def _prompt(self, seat: int) -> str:
        if self.is_over:
            return self._end_text(seat)
        proposer = self.proposer()
        number, pie = self.round + 1, self.pie()
        if number < self.config.max_rounds:
            following = proposer_of(number, self.num_players)
            after = f"if it fails the pie shrinks to {self._pies[number]} and seat {following} proposes next"
        else:
            after = "this is the last round: if it fails everyone scores 0"
        if self.proposal is None:
            head = f"Round {number} of {self.config.max_rounds}, pie {pie} ({after}). "
            if seat == proposer:
                return head + f"You propose. Answer {self.action_format(seat)}."
            return head + f"Seat {proposer} is proposing."
        shares = ", ".join(f"{'you' if s == seat else f'seat {s}'} {share}" for s, share in enumerate(self.proposal))
        head = f"Round {number} of {self.config.max_rounds}, pie {pie} ({after}). Seat {proposer}'s proposal: {shares}. "
        if seat == proposer:
            return head + "The others are voting."
        return head + f"Vote: answer {self.action_format(seat)}."

    def observe(self, seat: int) -> Observation:
        cfg = self.config
        players = self.num_players
        rounds = [self._round_line(i + 1, v, seat) for i, v in enumerate(self.votes)]
        lines = [
            f"Coalition bargaining. You are seat {seat} of {players} (seats 0 to {players - 1}). A proposal needs "
            f"{cfg.majority()} yes votes of {players}, the proposer's own included. Pies by round: "
            f"{', '.join(str(p) for p in self._pies)}.",
            "Rounds so far:",
            *(rounds or ["  (none yet)"]),
            *transcript(self.moves, seat, ROUND),
            self._prompt(seat),
        ]
        shares = self.shares()
        data: dict[str, Any] = {
            "seat": seat,
            "players": players,
            "round": self.current_round(),
            "max_rounds": cfg.max_rounds,
            "pies": list(self._pies),
            "pie": self.pie(),
            "majority": cfg.majority(),
            "phase": self.phase(),
            "proposer": None if self.is_over else self.proposer(),
            "proposal": None if self.proposal is None else list(self.proposal),
            "votes": [
                {"round": i + 1, "proposer": v.proposer, "pie": v.pie, "shares": list(v.shares), "votes": list(v.votes)}
                | {"passed": v.passed}
                for i, v in enumerate(self.votes)
            ],
            "message_chars": cfg.message_chars,
            "messages": messages_data(self.moves, ROUND),
            "history": history_data(self.moves, ROUND),
            "over": self.is_over,
            "shares": None if shares is None else list(shares),
        }
        return Observation(text="\n".join(lines), data=data)

    def _status(self) -> str:
        if self.is_over:
            return self._end_text(None)
        number = f"Round {self.round + 1} of {self.config.max_rounds}, pie {self.pie()}"
        if self.proposal is None:
            return f"{number}: seat {self.proposer()} to propose."
        return f"{number}: voting on seat {self.proposer()}'s proposal."

    def public_view(self) -> View:
        players = self.num_players
        rows = [[f"{v.shares[s]} {v.votes[s]}" for s in range(players)] for v in self.votes]
        if self.proposal is not None:
            rows.append([f"{share} ?" if s != self.proposer() else f"{share} yes" for s, share in enumerate(self.proposal)])
        labels = [f"{i + 1} (seat {v.proposer})" for i, v in enumerate(self.votes)]
        if self.proposal is not None:
            labels.append(f"{self.round + 1} (seat {self.proposer()})")
        return render.view(
            self._status(),
            render.facts(
                {
                    "round": f"{self.current_round()} of {self.config.max_rounds}",
                    "pie": self.pie(),
                    "majority": f"{self.config.majority()} of {players}",
                }
            ),
            render.grid(
                rows,
                title="share and vote of each seat, by round (proposer)",
                row_labels=labels,
                col_labels=[f"seat {s}" for s in range(players)],
            ),
            chat(self.moves, ROUND),
            render.text("\n".join(transcript(self.moves, None, ROUND))),
        )

    def full_view(self) -> View:
        return self.public_view()

    @classmethod
    def random_free_action(cls, observation: Observation, rng: Any) -> str:
        data = observation.data
        if data["phase"] == PROPOSE_PHASE:
            cuts = sorted(rng.randrange(data["pie"] + 1) for _ in range(data["players"] - 1))
            shares = [b - a for a, b in zip([0, *cuts], [*cuts, data["pie"]], strict=True)]
            move = _move(PROPOSE, tuple(shares))
        else:
            move = rng.choice((YES, NO))
        return format_action(move, fitting_message(rng.choice(SAMPLE_MESSAGES), data["message_chars"]))


def _move(verb: str, shares: Sequence[int] | None) -> str:
    """The canonical move without its message."""
    return verb if shares is None else f"{PROPOSE} {' '.join(str(share) for share in shares)}"
