"""Training samples from the store: the turns a model played as a live bot.

The rows come from ``trainer.export.trajectory_rows`` (the same reading the JSONL export
does). A turn can train only if the store kept what the loss needs: the prompt (chat
messages, turned into token ids with the learner's template), the reply and the
per-token log-probs the acting policy gave it. The reply is re-tokenised; a turn whose
tokens do not line up one-to-one with its stored log-probs (a reply cut off by the token
budget, another tokenizer) is skipped, never guessed.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from typing import Any

from arena.store import Store
from bots.prompts import Prompt
from trainer.config import StoreSetting, TrainConfigError
from trainer.export import rewards_summing_to, trajectory_rows
from trainer.policy import Policy
from trainer.rollout import Sample, turn_times

STORE_MATCH_BASE = 1_000_000_000
"""Stored matches are numbered from here, apart from any update's rollouts."""


def prompt_of(stored: str) -> Prompt | None:
    """The prompt a move carried (the JSON chat messages), or None if it is not one."""
    try:
        messages = json.loads(stored)
    except (TypeError, json.JSONDecodeError):
        return None
    if not isinstance(messages, list):
        return None
    by_role = {m.get("role"): m.get("content") for m in messages if isinstance(m, dict)}
    if not isinstance(by_role.get("system"), str) or not isinstance(by_role.get("user"), str):
        return None
    return Prompt(system=by_role["system"], user=by_role["user"])


def store_samples(setting: StoreSetting, policy: Policy) -> list[Sample]:
    """The usable turns of ``setting.bot``, their rewards summing to each seat's return.

    None usable is a TrainConfigError, not an empty list: a run told to learn from the store
    would otherwise train on its rollouts alone and never say so (a scripted bot's turns
    carry no log-probs)."""
    store = Store(setting.db, read_only=True)
    try:
        since = None if setting.since_hours is None else time.time() - setting.since_hours * 3600
        rows = list(
            trajectory_rows(
                store,
                game=setting.game,
                bot=setting.bot,
                limit=setting.limit,
                since=since,
                exclude_opponents=setting.exclude_opponents,
            )
        )
    finally:
        store.conn.close()
    numbers: dict[str, int] = {}
    trajectories: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        match = numbers.setdefault(row["match_id"], STORE_MATCH_BASE + len(numbers))
        trajectories[(match, row["seat"])].append(row)
    samples: list[Sample] = []
    unrecorded = mismatched = 0
    for (match, seat), turns in trajectories.items():
        usable = []
        whens = turn_times(turns[0]["game"], [row["step"] for row in turns])
        for row, when in zip(turns, whens, strict=True):
            prompt = prompt_of(row["prompt"])
            reply = row["raw"] if row["raw"] is not None else f"[{row['action']}]"
            if prompt is None or row["logprobs"] is None:
                unrecorded += 1
                continue
            action_ids = (*policy.tokenizer(reply, add_special_tokens=False)["input_ids"], policy.eos_id)
            if len(action_ids) != len(row["logprobs"]):
                mismatched += 1
                continue
            usable.append((row, when, policy.prompt_ids(prompt), action_ids))
        if not usable:
            continue
        rewards = rewards_summing_to([row["reward"] for row, _, _, _ in usable], usable[-1][0]["return"])
        for (row, when, prompt_ids, action_ids), reward in zip(usable, rewards, strict=True):
            samples.append(
                Sample(
                    match=match,
                    seed=row["seed"],
                    game=row["game"],
                    seat=seat,
                    step=when,
                    prompt_ids=prompt_ids,
                    action_ids=action_ids,
                    logprobs=tuple(row["logprobs"]),
                    entropy=None,
                    reward=reward,
                    opponent="+".join(row["opponents"]),
                )
            )
    if not rows:
        raise TrainConfigError(
            f"store: no finished match in {setting.db} passes [store]'s filters (bot {setting.bot!r}, game,"
            " since_hours, exclude_opponents): there is nothing to train on"
        )
    if not samples:
        raise TrainConfigError(
            f"store.bot: none of the {len(rows)} turns {setting.bot!r} took in {setting.db} (with [store]'s filters) "
            f"can be trained on: {unrecorded} kept no prompt and per-token log-probs (only a language-model bot "
            f"records them, a scripted bot never), {mismatched} do not re-tokenise to their stored log-probs"
        )
    return samples
