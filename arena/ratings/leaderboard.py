"""Leaderboards assembled from the store: TrueSkill, Nash averaging, records, costs.

Two tables. Per game variant: each bot's TrueSkill (mu, sigma, mu - 3 sigma), its record
(games, W/D/L, forfeits, format errors), its Nash rating from the pairwise log-odds
meta-game with a bootstrap interval, and its equilibrium mass. Overall: the agents-versus-
games meta-game, giving each bot a skill and each game a difficulty. Ranks follow
LMArena: 1 + the number of bots whose 95% interval lies wholly above this one's, so bots
that cannot be told apart share a rank.
"""

from __future__ import annotations

import functools
import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import numpy as np

import games
from arena.ratings.nash import agent_task_nash, bootstrap_counts, count_wins, logodds_matrix, nash_ratings
from arena.ratings.trueskill import Rating, interval95, rank_by_intervals, ranks_from_returns
from arena.store import FINISHED, Store, deal_in_play, where

Pair = tuple[str, str, float]

SELF_PLAY = (
    "EXISTS (SELECT 1 FROM seats a JOIN seats b ON b.match_id = a.match_id AND b.seat > a.seat AND b.bot = a.bot"
    " WHERE a.match_id = {match})"
)
"""Whether one bot holds two seats of the match whose id ``{match}`` names. The store does not
rate such matches (a bot against itself says nothing about strength), and the leaderboard
leaves them out of competitive games too: counted per seat, one match showed as two games, a
win and a loss against itself. In a cooperative game they stay, once per match: a team of
copies of one bot is how its play is measured (Hanabi's self-play score). Asked per match,
through the seats' primary key: a list of every self-play match in the store read every
seat, three times for each variant's leaderboard, however few matches the variant had."""


def _counted(matches: str) -> str:
    """An SQL condition on the ``matches`` alias: a match the leaderboard counts. Not a
    self-play match of a competitive game, nor one whose deal another table still plays:
    its result is withheld until then (the store rates it only then, too), and counted at
    once, a table's win showed on the board while the other table held the same cards."""
    quoted = ("'" + game.spec.name.replace("'", "''") + "'" for game in games.all() if game.spec.teams == "all")
    cooperative = ", ".join(quoted)
    return f"({matches}.game IN ({cooperative}) OR NOT {SELF_PLAY.format(match=f'{matches}.id')}) AND NOT {deal_in_play(matches)}"


@dataclass(frozen=True)
class FinishedMatch:
    id: str
    variant: str
    players: tuple[str, ...]
    returns: tuple[float, ...]
    forfeit_seat: int | None = None


def finished_matches(store: Store, *, game: str | None = None, variant: str | None = None) -> list[FinishedMatch]:
    clause, args = where({"status = ?": FINISHED, "game = ?": game, "variant = ?": variant})
    rows = store.conn.execute(
        f"SELECT id, variant, players, returns, forfeit_seat FROM matches{clause} AND {_counted('matches')} ORDER BY ended_at",
        args,
    )
    return [
        FinishedMatch(r["id"], r["variant"], tuple(json.loads(r["players"])), tuple(json.loads(r["returns"])), r["forfeit_seat"])
        for r in rows
    ]


def pairwise(match: FinishedMatch) -> list[Pair]:
    """Every pair of distinct bots at the table: 1 if the first ranked higher, 0.5 if equal, 0 if lower.

    The ranks are TrueSkill's (``ranks_from_returns``), so both ratings read a match alike:
    a forfeiting seat loses to every other seat whatever the returns (in a game that is not
    zero-sum its minimum return can tie an honest seat's, and failing must never score a
    draw), and returns equal but for float noise (public-goods pays 6.6 and
    6.6000000000000005 for one payoff) draw."""
    out: list[Pair] = []
    ranks = ranks_from_returns(match.returns, match.forfeit_seat)
    seats = range(len(match.players))
    for i in seats:
        for j in seats:
            a, b = match.players[i], match.players[j]
            if i < j and a != b:
                out.append((a, b, 1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0))
    return out


@dataclass(frozen=True)
class MatchPairs:
    """Every match's pairs, read once into index arrays (``match`` says whose pair each is),
    so that a bootstrap resample only weights them."""

    agents: int
    match: np.ndarray
    rows: np.ndarray
    cols: np.ndarray
    scores: np.ndarray

    @classmethod
    def of(cls, matches: Sequence[FinishedMatch], agents: Sequence[str]) -> MatchPairs:
        index = {agent: i for i, agent in enumerate(agents)}
        found = [(k, index[a], index[b], score) for k, m in enumerate(matches) for a, b, score in pairwise(m)]
        match, rows, cols, scores = zip(*found, strict=True) if found else ((), (), (), ())
        as_index = functools.partial(np.asarray, dtype=np.intp)
        return cls(len(agents), as_index(match), as_index(rows), as_index(cols), np.asarray(scores, dtype=float))

    def nash(self, drawn: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Nash ratings and equilibrium mass of the agents, each match counted as often as ``drawn`` says (once by default)."""
        wins, games = count_wins(self.agents, self.rows, self.cols, self.scores, None if drawn is None else drawn[self.match])
        return nash_ratings(logodds_matrix(wins, games))


def _records(store: Store, variant: str) -> dict[str, dict[str, Any]]:
    # per match first: a cooperative team of copies of one bot is one game, so its seats
    # share one return in the mean (averaged per seat, it weighed as many games as seats)
    rows = store.conn.execute(
        f"""SELECT bot, COUNT(*) AS games, SUM(wins) AS wins, SUM(draws) AS draws, SUM(losses) AS losses,
                  SUM(forfeits) AS forfeits, AVG(score) AS mean_return
           FROM (SELECT s.bot, SUM(s.outcome = 'win') AS wins, SUM(s.outcome = 'draw') AS draws,
                        SUM(s.outcome = 'loss' OR (s.outcome = 'forfeit' AND EXISTS
                            (SELECT 1 FROM seats o WHERE o.match_id = s.match_id AND o.outcome = 'win'))) AS losses,
                        SUM(s.outcome = 'forfeit') AS forfeits, AVG(s.score) AS score
                 FROM seats s JOIN matches m ON m.id = s.match_id
                 WHERE m.status = ? AND m.variant = ? AND {_counted("m")} GROUP BY s.bot, s.match_id)
           GROUP BY bot""",
        (FINISHED, variant),
    )
    records = {row["bot"]: dict(row) for row in rows}
    errors = store.conn.execute(
        f"""SELECT s.bot, SUM(t.format_error) AS format_errors, SUM(t.accepted = 0 AND t.format_error = 0) AS illegal_moves,
                  SUM(t.cost) AS cost, COUNT(t.cost) AS costs_given, CAST(TOTAL(t.tokens_in) AS INTEGER) AS tokens_in,
                  CAST(TOTAL(t.tokens_out) AS INTEGER) AS tokens_out
           FROM matches m JOIN turns t ON {store.turns_of()} JOIN seats s ON s.match_id = m.id AND s.seat = t.seat
           WHERE m.status = ? AND m.variant = ? AND {_counted("m")}
           GROUP BY s.bot""",
        (FINISHED, variant),
    )
    # TOTAL sums in floating point, which no stored count can overflow (SUM raised "integer
    # overflow" for good once two turns' counts passed 2**63, and every leaderboard of the game failed)
    # Costs of +inf and -inf (any unit, stored as given) add up to NaN, which SQLite's SUM gives
    # as null: the bot's cost is then not a number, not the 0 of a bot that gave none
    for row in errors:
        record = records.setdefault(row["bot"], {})
        record.update({k: row[k] or 0 for k in row.keys() if k not in ("bot", "costs_given")})  # noqa: SIM118
        if row["cost"] is None and row["costs_given"]:
            record["cost"] = math.nan
    return records


def variant_leaderboard(store: Store, variant: str, *, resamples: int = 200, seed: int = 0) -> list[dict[str, Any]]:
    """One row per bot that finished a match of ``variant``, best first."""
    records = _records(store, variant)
    ratings = {row["bot"]: Rating(row["mu"], row["sigma"]) for row in store.ratings(variant=variant)}
    agents = sorted(records)
    if not agents:
        return []
    matches = finished_matches(store, variant=variant)
    pairs = MatchPairs.of(matches, agents)
    nash, mass = pairs.nash()
    if len(matches) >= 2 and len(agents) >= 2:
        low, high = bootstrap_counts(len(matches), lambda drawn: pairs.nash(drawn)[0], resamples=resamples, seed=seed)
    else:
        low, high = nash.copy(), nash.copy()
    skills = [ratings.get(bot, Rating()) for bot in agents]
    ts_rank = rank_by_intervals([interval95(r) for r in skills])
    nash_rank = rank_by_intervals(list(zip(low.tolist(), high.tolist(), strict=True)))
    rows = []
    for i, bot in enumerate(agents):
        record, rating = records[bot], skills[i]
        games_played = record.get("games", 0)
        rows.append(
            {
                "bot": bot,
                "variant": variant,
                "rank": ts_rank[i],
                "mu": rating.mu,
                "sigma": rating.sigma,
                "conservative": rating.conservative,
                "rated": bot in ratings,
                "games": games_played,
                "wins": record.get("wins", 0),
                "draws": record.get("draws", 0),
                "losses": record.get("losses", 0),
                "forfeits": record.get("forfeits", 0),
                "format_errors": record.get("format_errors", 0),
                "illegal_moves": record.get("illegal_moves", 0),
                "mean_return": record.get("mean_return"),
                "nash": _solved(nash[i]),
                "nash_low": _solved(low[i]),
                "nash_high": _solved(high[i]),
                "nash_rank": nash_rank[i],
                "mass": _solved(mass[i]),
                "cost": record.get("cost", 0) or 0.0,
                "cost_per_match": (record.get("cost", 0) or 0.0) / games_played if games_played else 0.0,
                "cost_per_win": (record.get("cost", 0) or 0.0) / record["wins"] if record.get("wins") else None,
                "tokens_in": record.get("tokens_in", 0),
                "tokens_out": record.get("tokens_out", 0),
            }
        )
    rows.sort(key=lambda r: (r["rank"], -r["conservative"], r["bot"]))
    return rows


NOTHING_RATED = (
    "no finished match between different bots: self-play is not rated, nor a void or unfinished match,"
    " nor one whose deal another table still plays"
)
"""What a variant's empty leaderboard means, said in its place: a variant played only in
self-play showed a table of headers alone, as if rating had failed."""


def rating_text(row: Mapping[str, Any]) -> tuple[str, str, str]:
    """mu, sigma and mu - 3 sigma as tables show them: "-" for a bot not rated yet (a
    cooperative game outside duplicate groups, a group not played out), whose numbers are
    the prior's, which read as a tie at 25.00 between all such bots."""
    if not row["rated"]:
        return "-", "-", "-"
    return fixed(row["mu"]), fixed(row["sigma"]), fixed(row["conservative"])


def record_text(row: Mapping[str, Any]) -> str:
    """W/D/L as tables show it: "-" for a bot none of whose games anyone wins or loses (ranked
    and cooperative games; a forfeit in a two-seat zero-sum game is a loss), not 0/0/0."""
    if not row["wins"] + row["draws"] + row["losses"]:
        return "-"
    return f"{row['wins']}/{row['draws']}/{row['losses']}"


TABLE_HEADER = (
    "rank", "bot", "mu", "sigma", "mu-3σ", "games", "W/D/L", "mean return", "forfeits", "format errors", "Nash [95%]", "mass",
    "cost/match",
)  # fmt: skip
"""The columns of a variant's table, as `arena ratings --game`, tournaments and the report show it."""


def table_cells(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """One bot's row of a variant's table (``TABLE_HEADER``)."""
    return (
        row["rank"],
        row["bot"],
        *rating_text(row),
        row["games"],
        record_text(row),
        f"{row['mean_return']:.3g}",
        row["forfeits"],
        row["format_errors"],
        f"{fixed(row['nash'])} [{fixed(row['nash_low'])}, {fixed(row['nash_high'])}]",
        fixed(row["mass"]),
        f"{row['cost_per_match']:.4g}",
    )


def fixed(value: float, digits: int = 2, *, sign: bool = False) -> str:
    """``value`` to ``digits`` places, without the minus of one that rounds to zero ("-0.00")."""
    return f"{round(value, digits) + 0.0:{'+' if sign else ''}.{digits}f}"


SOLVER_NOISE = 1e-9
"""What the equilibrium solver leaves of an exact zero (-2.4e-13): shown as 0, not -0.00."""


def _solved(value: float) -> float:
    return 0.0 if abs(value) < SOLVER_NOISE else float(value)


def game_leaderboards(store: Store, game: str, *, resamples: int = 200) -> dict[str, list[dict[str, Any]]]:
    """Every variant of ``game`` that has matches in the store, each with its leaderboard."""
    variants = [row["variant"] for row in store.conn.execute("SELECT DISTINCT variant FROM matches WHERE game = ?", (game,))]
    return {variant: variant_leaderboard(store, variant, resamples=resamples) for variant in sorted(variants)}


@dataclass(frozen=True)
class Overall:
    agents: list[str]
    variants: list[str]
    scores: np.ndarray  # agents x variants, mean return; missing cells filled with the column's lowest
    played: np.ndarray  # agents x variants, matches behind each score
    skill: np.ndarray
    difficulty: np.ndarray
    agent_mass: np.ndarray
    game_mass: np.ndarray
    dropped: list[str]

    def rows(self) -> list[dict[str, Any]]:
        order = np.argsort(-self.skill, kind="stable")
        return [
            {
                "bot": self.agents[i],
                "skill": _solved(self.skill[i]),
                "mass": _solved(self.agent_mass[i]),
                "games": int(self.played[i].sum()),
            }
            for i in order
        ]

    def game_rows(self) -> list[dict[str, Any]]:
        return [
            {
                "variant": v,
                "difficulty": None if np.isnan(self.difficulty[j]) else float(self.difficulty[j]),
                "mass": float(self.game_mass[j]),
                "informative": v not in self.dropped,
            }
            for j, v in enumerate(self.variants)
        ]


def overall(store: Store, leave_out: AbstractSet[str] = frozenset()) -> Overall | None:
    """Agents versus games across every variant with finished matches, but those in ``leave_out``
    (held-out games, reported apart).

    A bot that never played a game gets that game's lowest observed mean return: the
    pessimistic reading, so that skipping hard games cannot raise a bot's skill.
    """
    totals: dict[tuple[str, str], list[float]] = defaultdict(list)
    for match in finished_matches(store):
        if match.variant in leave_out:
            continue
        seats: dict[str, list[float]] = defaultdict(list)  # a cooperative team of copies plays once
        for bot, ret in zip(match.players, match.returns, strict=True):
            seats[bot].append(ret)
        for bot, returns in seats.items():
            totals[(bot, match.variant)].append(sum(returns) / len(returns))
    if not totals:
        return None
    agents = sorted({bot for bot, _ in totals})
    variants = sorted({v for _, v in totals})
    scores = np.full((len(agents), len(variants)), np.nan)
    played = np.zeros_like(scores)
    for (bot, variant), values in totals.items():
        i, j = agents.index(bot), variants.index(variant)
        scores[i, j] = float(np.mean(values))
        played[i, j] = len(values)
    lowest = np.nanmin(scores, axis=0)
    scores = np.where(np.isnan(scores), lowest, scores)
    solved = agent_task_nash(scores)
    return Overall(
        agents,
        variants,
        scores,
        played,
        solved.skill,
        solved.difficulty,
        solved.p,
        solved.q,
        [variants[j] for j in solved.dropped],
    )
