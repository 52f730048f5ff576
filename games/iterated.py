"""Iterated simultaneous-move games: the machinery every game played in rounds shares.

Most social dilemmas are one simultaneous decision repeated: each round every seat moves
at once, then sees what the others did, and the round pays at once so that learners get
per-round rewards. Optionally each round opens with a talk step (cheap talk: one message
per seat, shown to all before anyone moves, binding nobody). That structure lives here
once: rounds and phases, the talk step and its message limit, forgiving parsing of a
finite move set, the history of moves, messages and payments, the observation skeleton
and the spectator views.

``IteratedGame`` is the base of every such game: a game declares its move choices, what a
stage of a round pays, and how to describe a round. ``MatrixGame`` goes further for two
seats with one fixed set of moves and a payoff table: such a game only declares its moves
and payoffs. Neither has a ``spec``, so the registry does not list them as games.
"""

from __future__ import annotations

import functools
import itertools
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from games import render
from games.api import ConfigError, Game, GameConfig, IllegalAction, Observation, View, first_shown, not_shown
from games.bargaining import MESSAGES_FENCED, check_message, fitting_message, quote

TALK = "talk"
MAX_AMOUNT = 1_000
"""The largest top of a numbered move set: every amount is a listed legal action, so a
config of a billion (which any bot may send with a seek) would fill the server's memory."""
MOVE = "move"
OVER = "over"


def normalise(text: str) -> str:
    """Lower case with single spaces: the form forgiving aliases are looked up in."""
    return " ".join(text.lower().split())


def or_list(words: Sequence[str]) -> str:
    """'a', 'a or b', 'a, b or c': how an answer's choices are named to a player."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def amount(action: str) -> int:
    """The number a canonical numbered action ends with ('contribute 5' -> 5)."""
    return int(action.rpartition(" ")[2])


@dataclass(frozen=True)
class Choices:
    """A finite set of moves: the canonical actions, every accepted spelling of each
    (normalised), and how to name the choice in a prompt or an error."""

    actions: tuple[str, ...]
    aliases: Mapping[str, str]
    hint: str

    @classmethod
    @functools.lru_cache(maxsize=256)  # a coordination game's options are the config's: any words
    def words(cls, moves: tuple[str, ...]) -> Choices:
        """Named moves; any unambiguous prefix is accepted too ('c' for cooperate)."""
        aliases: dict[str, str] = {}
        for move in moves:
            for end in range(1, len(move)):
                prefix = move[:end]
                if sum(other.startswith(prefix) for other in moves) == 1:
                    aliases[prefix] = move
        aliases.update({move: move for move in moves})
        return cls(moves, aliases, or_list(moves))

    @classmethod
    @functools.lru_cache(maxsize=64)
    def numbered(cls, verb: str, low: int, high: int) -> Choices:
        """'<verb> <n>' for n from low to high; the bare number is accepted too."""
        actions = tuple(f"{verb} {n}" for n in range(low, high + 1))
        aliases = {action: action for action in actions} | {str(n): f"{verb} {n}" for n in range(low, high + 1)}
        return cls(actions, aliases, f"{verb} <n> with n a whole number from {low} to {high} (or just the number)")

    def label(self, move: str) -> str:
        """The shortest accepted spelling of ``move``, upper case: a grid cell (C, D; SW, ST)."""
        return min((alias for alias, target in self.aliases.items() if target == move), key=len).upper()


def require_order(config: GameConfig, links: Sequence[tuple[str, str, str]], why: str) -> None:
    """Check payoff orderings such as temptation > reward, each link (high, '>' or '>=', low),
    naming the first key that breaks it and the reason the game needs it."""
    for high, relation, low in links:
        above, below = getattr(config, high), getattr(config, low)
        if not (above > below if relation == ">" else above >= below):
            words = "greater than" if relation == ">" else "at least"
            got = f"{high}={render.number(above)}, {low}={render.number(below)}"
            raise ConfigError(f"config key '{high}' must be {words} '{low}' ({why}), got {got}")


@dataclass(frozen=True)
class IteratedConfig(GameConfig):
    """The keys every iterated game has: how many rounds, and the optional talk step."""

    rounds: int = 10
    cheap_talk: bool = False
    message_chars: int = 200

    def check(self) -> None:
        super().check()
        self.at_least("rounds", 1)
        self.at_least("message_chars", 1)
        self.bound_history("rounds", "message_chars", talk=self.cheap_talk)

    def action_space(self) -> tuple[str, ...] | None:
        return None if self.cheap_talk else self.move_space()

    def move_space(self) -> tuple[str, ...]:
        """Every move of every stage (talk aside) under this config."""
        raise NotImplementedError


class IteratedGame(Game):
    """Rounds of simultaneous moves by every seat, each round optionally opened by a talk step.

    A round is a talk step (with ``cheap_talk``) then the game's stages, ``move`` by default;
    a game may add stages after it (a punishment step). Games for exactly two seats speak of
    "you" and "they" and give ``my_*``/``their_*`` data; games for more list every seat.
    """

    config: IteratedConfig
    SAMPLE_MESSAGES: ClassVar[tuple[str, ...]] = ("",)
    """What a random player says in a talk step."""

    round: int
    """Rounds completed so far (the 0-based index of the current round while live)."""
    phase: str
    moves: list[tuple[str, ...]]
    """Each round's move-stage actions, by seat, from the round's move step on."""
    messages: list[tuple[int, int, str]]
    """(round, 1-based; seat; text) of every message sent, in order."""
    paid: list[list[float]]
    """What each round has paid each seat so far, rows parallel to ``moves``."""
    pairwise: bool
    """Whether the game is for exactly two seats, so that a seat's other is 'they'."""
    _seats: tuple[int, ...]
    _first_stage: str
    _next_stage: dict[str, str | None]

    def _setup(self) -> None:
        self.round = 0
        self.moves = []
        self.messages = []
        self.paid = []
        self._seats = tuple(range(self.num_players))
        self.pairwise = self.spec.max_players == 2
        stages = self._round_stages()
        self._first_stage = stages[0]
        self._next_stage = dict(zip(stages, (*stages[1:], None), strict=True))
        self._prepare()
        self._open_round()

    # ---- what a game writes --------------------------------------------------------------

    def _prepare(self) -> None:
        """Set up the game's own state (a stock, a payoff table) before the first round."""

    def _round_stages(self) -> tuple[str, ...]:
        """The action steps of a round after the talk step; the first must be ``move``."""
        return (MOVE,)

    def _start_round(self) -> None:
        """A new round begins (deal its chance events here)."""

    def _ended_early(self) -> bool:
        """Whether the round just completed ended the game before the last round."""
        return False

    @abstractmethod
    def _choices(self, seat: int) -> Choices:
        """The moves ``seat`` may make at the current (non-talk) stage."""

    @abstractmethod
    def _play(self, joint: tuple[str, ...]) -> Sequence[float]:
        """Apply the current stage's canonical actions (by seat); what the stage pays each seat."""

    @abstractmethod
    def _situation_lines(self, seat: int) -> list[str]:
        """The game-specific part of an observation: payoffs, private information, the stock."""

    @abstractmethod
    def _describe(self, seat: int, index: int) -> str:
        """Round ``index`` (0-based) as ``seat`` sees it, without its payments."""

    @abstractmethod
    def _cell(self, seat: int, index: int) -> str:
        """``seat``'s move in round ``index``, short, for the spectators' grid."""

    @abstractmethod
    def _grid_title(self) -> str:
        """The title of the moves grid, saying what its cells mean."""

    def _game_data(self, seat: int) -> dict[str, Any]:
        """Observation data beyond the rounds, moves, scores and messages."""
        return {}

    def _move_value(self, move: str) -> Any:
        """A canonical move as the observation data gives it (numbered games give the number)."""
        return move

    def _stage_prompt(self, seat: int) -> str:
        """What to do now, in a non-talk stage."""
        return f"Now: move of round {self.current_round}. Answer {self._choices(seat).hint}."

    def _end_text(self) -> str:
        return f"Game over after {render.count(self.round, 'round')}."

    def _facts(self) -> dict[str, Any]:
        """Game-specific facts for the spectators (a stock, a pot)."""
        return {}

    # ---- the rules the base runs ---------------------------------------------------------

    @property
    def current_round(self) -> int:
        """The round being played, 1-based (the last one played once the game is over)."""
        return self.round if self.is_over else self.round + 1

    def to_move(self) -> tuple[int, ...]:
        return () if self.is_over else self._seats

    def legal_actions(self, seat: int) -> Sequence[str] | None:
        if self.is_over:
            return ()
        return None if self.phase == TALK else self._choices(seat).actions

    def action_format(self, seat: int) -> str:
        if self.phase == TALK:
            return (
                f"a message to the other {'player' if self.pairwise else 'players'}: any text up to "
                f"{self.config.message_chars} characters (it may be empty); it binds nobody"
            )
        return self._choices(seat).hint

    def validate(self, seat: int, action: str) -> str:
        if seat not in self._seats:
            seats = "0 and 1" if self.num_players == 2 else f"0 to {self.num_players - 1}"
            raise IllegalAction(f"there is no seat {seat}; the seats are {seats}")
        if self.is_over:
            raise IllegalAction("the game is over")
        if self.phase == TALK:
            text = " ".join(action.split())
            check_message(text, self.config.message_chars)
            return text
        choices = self._choices(seat)
        move = choices.aliases.get(action)
        if move is None:
            move = choices.aliases.get(normalise(action))
            if move is None:
                raise IllegalAction(f"'{action}' is not a move; answer {choices.hint}")
        return move

    def _apply(self, actions: Mapping[int, str]) -> Sequence[float] | None:
        joint = tuple(map(actions.__getitem__, self._seats))
        phase = self.phase
        if phase == TALK:
            number = self.round + 1
            self.messages.extend((number, seat, text) for seat, text in enumerate(joint))
            self.phase = self._first_stage
            return None
        if phase == MOVE:
            self.moves.append(joint)
            rewards = self._play(joint)
            self.paid.append(list(rewards))
        else:
            rewards = self._play(joint)
            row = self.paid[-1]
            for seat, reward in enumerate(rewards):
                row[seat] += reward
        following = self._next_stage[phase]
        if following is not None:
            self.phase = following
            return rewards
        self.round += 1
        if self.round == self.config.rounds or self._ended_early():
            self.is_over = True
            self.phase = OVER
        else:
            self._open_round()
        return rewards

    def _open_round(self) -> None:
        self.phase = TALK if self.config.cheap_talk else self._first_stage
        self._start_round()

    # ---- rendering -----------------------------------------------------------------------

    def _name(self, viewer: int, seat: int, *, object_case: bool = False) -> str:
        """How ``viewer`` reads ``seat``: you, they (them), or seat k."""
        if seat == viewer:
            return "you"
        if self.pairwise:
            return "them" if object_case else "they"
        return f"seat {seat}"

    def _viewer_first(self, viewer: int) -> list[int]:
        return [viewer, *(seat for seat in self._seats if seat != viewer)]

    def _score_line(self, seat: int) -> str:
        scores = self._returns
        if self.pairwise:
            return f"Score so far: you {render.number(scores[seat])}, them {render.number(scores[1 - seat])}."
        listed = ", ".join(f"seat {s}{' (you)' if s == seat else ''} {render.number(scores[s])}" for s in self._seats)
        return f"Scores so far: {listed}."

    def _paid_text(self, seat: int, row: Sequence[float]) -> str:
        if self.pairwise:
            return f"you {render.signed(row[seat])}, they {render.signed(row[1 - seat])}"
        return ", ".join(f"{self._name(seat, s)} {render.signed(row[s])}" for s in self._viewer_first(seat))

    def _history_lines(self, seat: int) -> list[str]:
        said: dict[int, dict[int, str]] = {}
        for number, speaker, text in self.messages:
            said.setdefault(number, {})[speaker] = text
        lines: list[str] = []
        first = first_shown(len(self.moves))
        if first:
            earlier = [sum(row[s] for row in self.paid[:first]) for s in range(self.num_players)]
            lines.append(f"  {not_shown(first)}: {self._paid_text(seat, earlier)} in all")
        for number in range(first + 1, self.round + 2):
            if number in said:
                talk = "; ".join(f"{self._name(seat, s)} said {_quoted(said[number][s])}" for s in self._viewer_first(seat))
                lines.append(f"  round {number}: {talk}")
            if number <= len(self.moves):
                paid = self._paid_text(seat, self.paid[number - 1])
                lines.append(f"  round {number}: {self._describe(seat, number - 1)} ({paid})")
        return lines or ["  (nothing yet)"]

    def _prompt(self, seat: int) -> str:
        if self.phase == TALK:
            whom = "the other player" if self.pairwise else "the other players"
            return (
                f"Now: talk step of round {self.current_round}. Send {whom} a message "
                f"(up to {self.config.message_chars} characters; it may be empty). You will see theirs before you move."
            )
        if self.is_over:
            return "The game is over."
        return self._stage_prompt(seat)

    def observe(self, seat: int) -> Observation:
        players = "" if self.pairwise else f" of {self.num_players}"
        lines = [
            f"{self.spec.title}, round {self.current_round} of {self.config.rounds}. You are seat {seat}{players}.",
            *self._situation_lines(seat),
            self._score_line(seat),
            f"History, oldest first. {MESSAGES_FENCED}" if self.config.cheap_talk else "History:",
            *self._history_lines(seat),
            self._prompt(seat),
        ]
        data: dict[str, Any] = {
            "seat": seat,
            "round": self.current_round,
            "rounds": self.config.rounds,
            "phase": self.phase,
            "message_chars": self.config.message_chars,
        }
        value = self._move_value
        if self.pairwise:
            data["my_moves"] = [value(joint[seat]) for joint in self.moves]
            data["their_moves"] = [value(joint[1 - seat]) for joint in self.moves]
            data["my_score"] = self._returns[seat]
            data["their_score"] = self._returns[1 - seat]
        else:
            data["players"] = self.num_players
            data["moves"] = [[value(move) for move in joint] for joint in self.moves]
            data["scores"] = list(self._returns)
        data["messages"] = [{"round": number, "seat": speaker, "text": text} for number, speaker, text in self.messages]
        data.update(self._game_data(seat))
        return Observation(text="\n".join(lines), data=data)

    def _status(self) -> str:
        head = self._end_text() if self.is_over else f"Round {self.current_round} of {self.config.rounds}, {self.phase} step."
        scores = ", ".join(f"seat {seat} {render.number(score)}" for seat, score in enumerate(self._returns))
        return f"{head} Score: {scores}."

    def public_view(self) -> View:
        """The latest ``HISTORY_SHOWN`` rounds' moves and talk, as the players' text shows them:
        every round in every view made a replay of 1,000 rounds with talk 131 MB, built while
        the server stalled."""
        facts = {"round": f"{self.current_round} of {self.config.rounds}", "step": self.phase}
        facts.update({f"seat {seat}": f"{render.number(score)}" for seat, score in enumerate(self._returns)})
        facts.update(self._facts())
        first = first_shown(len(self.moves))
        shown = range(first, len(self.moves))
        title = self._grid_title() + (f"; rounds before {first + 1} not shown" if first else "")
        blocks = [
            render.facts(facts),
            render.grid(
                [[self._cell(seat, index) for index in shown] for seat in self._seats],
                title=title,
                row_labels=[f"seat {seat}" for seat in self._seats],
                col_labels=[str(index + 1) for index in shown],
            ),
        ]
        if self.config.cheap_talk:
            chat = [(speaker, f"(round {n}) {text}") for n, speaker, text in self.messages if text and n > first]
            blocks.append(render.chat(chat, title="talk"))
        return render.view(self._status(), *blocks)

    def full_view(self) -> View:
        return self.public_view()

    @classmethod
    def random_free_action(cls, observation: Observation, rng: Any) -> str:
        if observation.data["phase"] == TALK:
            return fitting_message(rng.choice(cls.SAMPLE_MESSAGES), observation.data["message_chars"])
        return super().random_free_action(observation, rng)


def _quoted(message: str) -> str:
    """A message fenced as the negotiation games fence theirs: quoted plainly, one could close
    the quote and go on as another player ('hi"; seat 2 said "contribute all')."""
    return quote(message) if message else "nothing"


@dataclass(frozen=True)
class MatrixConfig(IteratedConfig):
    """A symmetric two-seat game with one set of moves: what each pair of moves pays.

    By default a payoff is the config key named after the pair, ``<mine>_<theirs>``
    (``stag_hare``: what hunting stag pays while the other hunts hare); games that name
    their payoffs otherwise override ``payoff`` and ``payoff_parameters``.
    """

    def moves(self) -> tuple[str, ...]:
        """The moves, in the order prompts list them (nice before nasty in a dilemma)."""
        raise NotImplementedError

    def payoff(self, mine: str, theirs: str) -> float:
        """What playing ``mine`` against ``theirs`` pays (the game is symmetric)."""
        return float(getattr(self, f"{mine}_{theirs}"))

    def payoff_parameters(self) -> dict[str, float]:
        """The named payoffs, as the observation data gives them to scripted bots."""
        return {f"{a}_{b}": self.payoff(a, b) for a, b in itertools.product(self.moves(), repeat=2)}

    def table(self) -> dict[tuple[str, str], tuple[float, float]]:
        """Each pair of moves (seat 0's, seat 1's) and what it pays (seat 0, seat 1)."""
        return {(a, b): (self.payoff(a, b), self.payoff(b, a)) for a, b in itertools.product(self.moves(), repeat=2)}

    def move_space(self) -> tuple[str, ...]:
        return self.moves()

    def return_bounds(self) -> tuple[float, float]:
        values = [self.payoff(a, b) for a, b in itertools.product(self.moves(), repeat=2)]
        return (self.rounds * min(values), self.rounds * max(values))


@functools.lru_cache(maxsize=256)
def _payoff_table(config: MatrixConfig) -> dict[tuple[str, str], tuple[float, float]]:
    """A config's table, built once while the config is among the recent ones (configs are
    frozen, so hashable; clients choose them, so the cache is bounded)."""
    return config.table()


@functools.lru_cache(maxsize=512)
def _payoff_lines(config: MatrixConfig, seat: int) -> tuple[str, ...]:
    """The payoff table as ``seat`` reads it in every observation."""
    table = _payoff_table(config)
    lines = ["Payoffs per round (you / them):"]
    for mine, theirs in itertools.product(config.moves(), repeat=2):
        paid = table[(mine, theirs) if seat == 0 else (theirs, mine)]
        lines.append(f"  you {mine}, they {theirs}: {render.number(paid[seat])} / {render.number(paid[1 - seat])}")
    return tuple(lines)


class MatrixGame(IteratedGame):
    """An iterated two-seat matrix game: the moves and the payoff table come from the config."""

    config: MatrixConfig
    _table: dict[tuple[str, str], tuple[float, float]]
    _move_choices: Choices

    def _prepare(self) -> None:
        self._table = _payoff_table(self.config)
        self._move_choices = Choices.words(self.config.moves())

    def _choices(self, seat: int) -> Choices:
        return self._move_choices

    def _play(self, joint: tuple[str, ...]) -> Sequence[float]:
        return self._table[(joint[0], joint[1])]

    def _situation_lines(self, seat: int) -> list[str]:
        return list(_payoff_lines(self.config, seat))

    def _describe(self, seat: int, index: int) -> str:
        pair = self.moves[index]
        return f"you {pair[seat]}, they {pair[1 - seat]}"

    def _cell(self, seat: int, index: int) -> str:
        return self._move_choices.label(self.moves[index][seat])

    def _grid_title(self) -> str:
        legend = ", ".join(f"{self._move_choices.label(move)} {move}" for move in self.config.moves())
        return f"moves ({legend})"

    def _game_data(self, seat: int) -> dict[str, Any]:
        return {"actions": list(self.config.moves()), "payoffs": self.config.payoff_parameters()}
