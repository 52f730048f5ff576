"""Buyer-seller: bargaining over the price of one item, with a deadline and optional private values.

Bilateral trade, the textbook bargaining problem: a seller whose cost is below the
buyer's value, so any price in between makes both better off than no deal. Under
complete information the Nash bargaining solution splits the surplus evenly, at the
midpoint of cost and value; the game records how far every deal lands from that
reference, whatever the information regime, so one can measure what hidden values
cost a negotiator (and whom). It tests anchoring, conceding and when to settle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from games import render
from games.api import ConfigError, GameSpec, IllegalAction, Observation, View, did_you_mean
from games.bargaining import (
    ACCEPT,
    MAX_AMOUNT,
    AlternatingOffers,
    AlternatingOffersConfig,
    chat,
    example_message,
    format_action,
    message_hint,
    no_arguments,
    read_move,
    whole_numbers,
)

SELLER = 0
BUYER = 1
ROLES = ("seller", "buyer")
OFFER = "offer"
VERBS = (OFFER, ACCEPT)
COMPLETE = "complete"
ONE_SIDED = "one-sided"
TWO_SIDED = "two-sided"
INFORMATION = (COMPLETE, ONE_SIDED, TWO_SIDED)
"""complete: both know cost and value; one-sided: the buyer knows the cost, the seller does
not know the value; two-sided: each knows only its own number."""
GRAMMAR = "write 'offer <price>' with a whole-number price, or 'accept'"
SAMPLE_MESSAGES: tuple[str, ...] = (
    "That is a fair price.",
    "I can't go further than this.",
    "Meet me halfway?",
    "Final offer.",
    "",
)
"""What a random player says with its action."""


@dataclass(frozen=True)
class BuyerSellerConfig(AlternatingOffersConfig):
    information: str = TWO_SIDED
    cost_min: int = 20
    cost_max: int = 50
    value_min: int = 50
    value_max: int = 80

    def check(self) -> None:
        super().check()
        if self.information not in INFORMATION:
            raise ConfigError(
                f"config key 'information' must be one of {', '.join(INFORMATION)}, got {self.information!r}"
                f"{did_you_mean(self.information, INFORMATION)}"
            )
        self.at_least("cost_min", 0)
        if self.cost_max < self.cost_min:
            raise ConfigError(f"config key 'cost_max' must be at least cost_min ({self.cost_min}), got {self.cost_max}")
        if self.value_min < self.cost_max:
            raise ConfigError(
                f"config key 'value_min' must be at least cost_max ({self.cost_max}) so that a deal is always possible, "
                f"got {self.value_min}"
            )
        if self.value_max < self.value_min:
            raise ConfigError(f"config key 'value_max' must be at least value_min ({self.value_min}), got {self.value_max}")
        self.at_most("value_max", MAX_AMOUNT)

    def price_range(self) -> tuple[int, int]:
        """The prices one may offer: no seller would sell below any possible cost, no buyer pay above any possible value."""
        return (self.cost_min, self.value_max)

    def return_bounds(self) -> tuple[float, float]:
        low, high = self.price_range()
        seller_worst = low - self.cost_max
        buyer_worst = self.value_min - high
        return (float(min(seller_worst, buyer_worst)), float(high - low))

    def knows(self, seat: int) -> tuple[bool, bool]:
        """(whether ``seat`` knows the cost, whether it knows the value) under this regime."""
        if self.information == COMPLETE:
            return True, True
        if seat == SELLER:
            return True, False
        return self.information == ONE_SIDED, True


def reference_price(cost: int, value: int) -> float:
    """The Nash bargaining solution under complete information: the price that splits the surplus evenly."""
    return (cost + value) / 2


def parse_action(action: str) -> tuple[int | None, str]:
    """Read an action as (the price offered, or None for accept; the message). Grammar only."""
    verb, args, message = read_move(action, VERBS, GRAMMAR)
    if verb == ACCEPT:
        no_arguments(verb, args)
        return None, message
    price = whole_numbers([arg.removeprefix("$") for arg in args], 1)
    if price is None:
        raise IllegalAction(
            "an offer is 'offer' and one whole-number price (put any message after a colon, as in 'offer 45: my best')"
        )
    return price[0], message


RULES = """\
Buyer-seller bargaining over the price of one item. Seat 0 is the seller, seat 1 the \
buyer. Chance draws the seller's cost (a whole number, uniformly between 20 and 50 by \
default) and the buyer's value (uniformly between 50 and 80 by default), so the value is never below \
the cost and a deal always exists. What each side knows depends on the information \
regime: "complete": both know both numbers; "one-sided": the buyer knows the cost but \
the seller does not know the value (only the seller is uncertain); "two-sided" (the \
default): each knows only its own number. The ranges are known to both. Players take \
turns, seller first, for at most a fixed number of turns in all (10 by default). On your \
turn either offer a price, "offer <price>" with a whole number between the lowest cost \
and the highest value (20 to 80 by default), or accept the other side's standing offer \
(their latest one) with "accept", which ends the game: at price p the seller scores \
p - cost and the buyer value - p. Either action may end with a colon and a message, \
e.g. "offer 65: it is worth it" or "accept: deal", unless the match turns messages off \
(your turn says so). If the turns run out without an \
acceptance, there is no deal and both score 0, so an offer made on the last turn can \
never be accepted. Your goal is the highest score of your own. After the game the \
record shows the reference price, the midpoint of cost and value (the Nash bargaining \
solution under complete information), and how far the deal was from it."""


class BuyerSeller(AlternatingOffers[int]):
    spec = GameSpec(
        name="buyer-seller",
        title="Buyer-seller bargaining",
        category="negotiation",
        description="Haggle over a price with a private cost and value; complete, one-sided or two-sided information.",
        rules=RULES,
        default_config=BuyerSellerConfig(),
        chance=True,
        hidden_information=True,
        free_text=True,
    )
    Config = BuyerSellerConfig
    verb = OFFER
    noun = "offer"
    sample_messages = SAMPLE_MESSAGES

    config: BuyerSellerConfig
    cost: int
    """The seller's cost; the buyer sees it only under complete or one-sided information."""
    value: int
    """The buyer's value; the seller sees it only under complete information."""

    def _deal(self) -> None:
        cfg = self.config
        rng = self.chance()
        self.cost = cfg.cost_min + rng.randrange(cfg.cost_max - cfg.cost_min + 1)
        self.value = cfg.value_min + rng.randrange(cfg.value_max - cfg.value_min + 1)

    def parse(self, action: str) -> tuple[int | None, str]:
        return parse_action(action)

    def check_offer(self, offer: int) -> None:
        low, high = self.config.price_range()
        if not low <= offer <= high:
            raise IllegalAction(f"a price must be between {low} and {high}, got {offer}")

    def offer_move(self, offer: int) -> str:
        return f"{OFFER} {offer}"

    def deal_rewards(self) -> tuple[float, float]:
        price = self.deal_price()
        assert price is not None
        return (float(price - self.cost), float(self.value - price))

    @classmethod
    def random_offer(cls, data: Mapping[str, Any], rng: Any) -> str:
        low, high = data["price_range"]
        return f"{OFFER} {low + rng.randrange(high - low + 1)}"

    def action_format(self, seat: int) -> str:
        low, high = self.config.price_range()
        accept = "or 'accept' to take the other side's standing offer, " if self.standing is not None else ""
        example = format_action(f"{OFFER} {(low + high) // 2}", example_message(self.config.message_chars))
        return (
            f"'offer <price>' with a whole-number price from {low} to {high}, {accept}"
            f"{message_hint(self.config.message_chars)}, e.g. '{example}'"
        )

    def deal_price(self) -> int | None:
        return self.standing if self.agreed else None

    def outcome(self) -> dict[str, Any]:
        """What the match record keeps: the reference price, the deal price and the distance between them."""
        reference = reference_price(self.cost, self.value)
        price = self.deal_price()
        return {
            "reference_price": reference,
            "deal_price": price,
            "distance_from_reference": None if price is None else abs(price - reference),
        }

    def private_info(self, seat: int) -> dict[str, int]:
        knows_cost, knows_value = self.config.knows(seat)
        return {k: v for k, v, known in (("cost", self.cost, knows_cost), ("value", self.value, knows_value)) if known}

    # ---- rendering ---------------------------------------------------------------------

    def _known(self, seat: int) -> tuple[int | None, int | None]:
        """(cost, value) as ``seat`` knows them now: everything is revealed at the end."""
        if self.is_over:
            return self.cost, self.value
        known = self.private_info(seat)
        return known.get("cost"), known.get("value")

    def _surplus(self, seat: int, price: int) -> int:
        return price - self.cost if seat == SELLER else self.value - price

    def _number_lines(self, seat: int) -> list[str]:
        cfg = self.config
        cost, value = self._known(seat)
        if seat == SELLER:
            own = f"Your cost: {self.cost} (selling at price p scores you p - {self.cost}; no deal scores 0)."
            name, number, low, high = "The buyer's value", value, cfg.value_min, cfg.value_max
        else:
            own = f"Your value: {self.value} (buying at price p scores you {self.value} - p; no deal scores 0)."
            name, number, low, high = "The seller's cost", cost, cfg.cost_min, cfg.cost_max
        if number is not None:
            return [own, f"{name}: {number}."]
        return [own, f"{name} is private to them: a whole number drawn uniformly from {low} to {high}."]

    def _information_text(self) -> str:
        return {
            COMPLETE: "complete (both sides know the cost and the value)",
            ONE_SIDED: "one-sided (the buyer knows the seller's cost; the seller does not know the buyer's value)",
            TWO_SIDED: "two-sided (each side knows only its own number)",
        }[self.config.information]

    def _end_text(self, seat: int | None) -> str:
        reference = reference_price(self.cost, self.value)
        midpoint = render.number(reference)
        numbers = f"The cost was {self.cost} and the value {self.value}; the reference price (their midpoint) was {midpoint}."
        price = self.deal_price()
        if price is None:
            return f"No deal: the turns ran out. Both sides score 0. {numbers}"
        if seat is None:
            scores = f"the seller scores {price - self.cost}, the buyer {self.value - price}"
        else:
            scores = f"you score {self._surplus(seat, price)}, they score {self._surplus(1 - seat, price)}"
        return f"Deal at price {price}: {scores}. {numbers} The deal was {render.number(abs(price - reference))} from it."

    def observe(self, seat: int) -> Observation:
        cfg = self.config
        low, high = cfg.price_range()
        cost, value = self._known(seat)
        lines = [
            f"Buyer-seller bargaining. You are seat {seat}, the {ROLES[seat]}; seat {1 - seat} is the {ROLES[1 - seat]}.",
            *self._number_lines(seat),
            f"Information: {self._information_text()}.",
            f"Prices are whole numbers from {low} to {high}.",
        ]
        standing: dict[str, int] | None = None
        if self.standing is not None and not self.is_over:
            by = self.proposer()
            standing = {"by": by, "price": self.standing}
            lines.append(
                f"Standing offer ({'yours' if by == seat else 'theirs'}): price {self.standing} "
                f"(you would score {self._surplus(seat, self.standing)})."
            )
        lines += self.transcript_lines(seat, ROLES)
        lines += [self._end_text(seat)] if self.is_over else self.prompt_lines(seat)
        outcome = self.outcome() if self.is_over else dict.fromkeys(("reference_price", "deal_price", "distance_from_reference"))
        data: dict[str, Any] = {
            "seat": seat,
            "role": ROLES[seat],
            "information": cfg.information,
            "cost": cost,
            "value": value,
            "cost_range": [cfg.cost_min, cfg.cost_max],
            "value_range": [cfg.value_min, cfg.value_max],
            "price_range": [low, high],
            "standing_offer": standing,
            **self.protocol_data(),
            **outcome,
        }
        return Observation(text="\n".join(lines), data=data)

    def _blocks(self, reveal: bool) -> list[dict[str, Any]]:
        low, high = self.config.price_range()
        facts: dict[str, Any] = {
            "information": self.config.information,
            "prices": f"{low} to {high}",
            "turn": f"{self.turn_number()} of {self.config.max_turns}",
        }
        if self.standing is not None:
            facts["deal" if self.agreed else f"offer by seat {self.proposer()} ({ROLES[self.proposer()]})"] = self.standing
        if reveal:
            outcome = self.outcome()
            facts |= {"cost": self.cost, "value": self.value, "reference price": f"{render.number(outcome['reference_price'])}"}
            if outcome["deal_price"] is not None:
                facts["distance from reference"] = f"{render.number(outcome['distance_from_reference'])}"
        return [render.facts(facts), chat(self.said()), render.text("\n".join(self.transcript_lines(None, ROLES)))]

    def _status(self) -> str:
        return self._end_text(None) if self.is_over else self.progress_text()

    def public_view(self) -> View:
        return render.view(self._status(), *self._blocks(reveal=self.is_over))

    def full_view(self) -> View:
        return render.view(self._status(), *self._blocks(reveal=True)) | self.outcome()
