"""The ``llm`` bot: the tiny model seated through the bot registry, in process and over the wire."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import trio

import games
from arena.seats import Move, Turn
from arena.store import Store
from bots.client import BotRun, run_bot
from bots.prompts import build_prompt
from bots.registry import BotSpecError, make_bot
from games.api import ConfigError
from tests.conftest import Arena
from trainer.llm_bot import LLMBot

ROOT = Path(__file__).resolve().parents[2]


def first_turn(game_name: str, match_id: str = "m-1") -> Turn:
    game = games.get(game_name)
    state = game.new(game.Config(), seed=0)
    return Turn.of(state, state.to_move()[0], match_id=match_id)


def test_a_spec_builds_the_bot_and_its_move_carries_what_training_needs(tiny_model_dir: Path) -> None:
    bot = make_bot(f"llm:model={tiny_model_dir}", "kuhn-poker", seed=3)
    assert isinstance(bot, LLMBot) and bot.label == f"llm:model={tiny_model_dir}"
    turn = first_turn("kuhn-poker")
    move = bot.act(turn)
    assert isinstance(move, Move) and turn.legal_actions is not None and move.action in turn.legal_actions
    assert move.raw == f"[{move.action}]" and not move.format_error
    assert turn.observation.text in json.loads(move.prompt or "")[1]["content"]
    assert move.logprobs is not None and len(move.logprobs) == move.tokens_out and all(lp < 0 for lp in move.logprobs)
    assert move.tokens_in == len(bot.policy.prompt_ids(build_prompt(turn)))
    assert bot.act(turn) == move  # sampling is keyed by (seed, step, seat, attempt)


def test_bots_share_one_loaded_model_per_setting(tiny_model_dir: Path) -> None:
    one = make_bot(f"llm:model={tiny_model_dir}", "tic-tac-toe", seed=1)
    two = make_bot(f"llm:model={tiny_model_dir}/.,device=cpu", "nim", seed=2)
    assert isinstance(one, LLMBot) and isinstance(two, LLMBot) and one.policy is two.policy
    hot = make_bot(f"llm:model={tiny_model_dir},temperature=3", "tic-tac-toe")
    assert isinstance(hot, LLMBot) and hot.policy is not one.policy and hot.policy.model is not one.policy.model
    assert hot.policy.temperature == 3.0


def test_the_seed_keys_the_sampling_and_a_seeded_match_replays(tiny_model_dir: Path) -> None:
    """The bot's seed (fixed per seat by the match seed) keys its draws, not the match id,
    which ``arena play`` and tournaments make up afresh (a uuid) for every match."""
    from arena.match import play_match
    from arena.seats import LocalSeat

    game = games.get("iterated-prisoners-dilemma")

    def actions(seed: int, match_id: str | None = None) -> list[str]:
        seats = [
            LocalSeat(make_bot(f"llm:model={tiny_model_dir}", game.spec.name, seed=seed), "model"),
            LocalSeat(make_bot("tit-for-tat", game.spec.name), "tit-for-tat", threaded=False),
        ]
        result = trio.run(lambda: play_match(game, seats, config={"rounds": 8}, seed=1, match_id=match_id))
        return [str(t.action) for t in result.turns if t.seat == 0]

    first = actions(0)
    assert actions(0) == first == actions(0, "another-id")  # a fresh bot, a fresh match id: the same match
    assert len(set(first)) == 2  # the draws differ from turn to turn
    assert actions(1) != first  # the seed is part of the key


def test_matches_played_at_once_share_the_models_forward_passes(tiny_model_dir: Path) -> None:
    """Eight prisoner's dilemma matches in one nursery, the model's seats run in threads as
    tournaments run them: their turns are batched, so there are far fewer forward passes
    than turns, and every answer is still legal."""
    from arena.match import play_match
    from arena.seats import LocalSeat

    game = games.get("iterated-prisoners-dilemma")
    bots = [make_bot(f"llm:model={tiny_model_dir},temperature=0.9", game.spec.name, seed=n) for n in range(8)]
    assert all(isinstance(bot, LLMBot) for bot in bots)
    policy = bots[0].policy  # type: ignore[attr-defined]
    before = policy.forward_passes
    results = []

    async def play(bot: LLMBot, n: int) -> None:
        seats = [LocalSeat(bot, "model"), LocalSeat(make_bot("tit-for-tat", game.spec.name), "tit-for-tat", threaded=False)]
        results.append(await play_match(game, seats, config={"rounds": 3}, seed=n, match_id=f"m{n}"))

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for n, bot in enumerate(bots):
                nursery.start_soon(play, bot, n)

    trio.run(main)
    turns = [t for r in results for t in r.turns if t.seat == 0]
    assert len(turns) == 24 and all(t.accepted for t in turns)
    assert policy.forward_passes - before <= len(turns) // 2


def test_free_form_games_are_generated_under_the_token_budget(tiny_model_dir: Path) -> None:
    bot = make_bot(f"llm:model={tiny_model_dir},max_new_tokens=5", "item-negotiation", seed=0)
    move = bot.act(first_turn("item-negotiation"))
    assert isinstance(move, Move) and move.logprobs is not None
    assert len(move.logprobs) == move.tokens_out <= 5
    assert move.format_error == (move.action is None)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ("", BotSpecError, r"bot 'llm' needs model=DIR"),
        (",temprature=0.5", BotSpecError, r"bot 'llm' has no option 'temprature'; did you mean 'temperature'"),
        (",temperature=0", BotSpecError, r"temperature must be > 0, got 0"),
        (",temperature=warm", ConfigError, r"'temperature' must be a number, got 'warm'"),
        (",max_new_tokens=0", BotSpecError, r"max_new_tokens must be > 0"),
        (",score_limit=-1", BotSpecError, r"score_limit must be >= 0"),
        (",device=quantum", BotSpecError, r"'quantum' is not a torch device"),
    ],
)
def test_bad_specs_fail_with_one_clear_line(tiny_model_dir: Path, options: str, error: type[Exception], message: str) -> None:
    spec = "llm" if not options else f"llm:model={tiny_model_dir}{options}"
    with pytest.raises(error, match=message):
        make_bot(spec, "tic-tac-toe")


def test_a_folder_that_is_not_a_model_is_a_spec_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(BotSpecError, match=r"bot 'llm': cannot load model .*not a model folder .*\(no weights, no tokenizer"):
        make_bot(f"llm:model={tmp_path}", "tic-tac-toe")


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ({"architectures": ["BertForMaskedLM"]}, "holds a BertForMaskedLM, not a causal language model"),
        ({"architectures": ["T5ForConditionalGeneration"], "is_encoder_decoder": True}, "holds an encoder-decoder"),
    ],
)
def test_a_model_that_cannot_write_replies_is_a_spec_error(
    tmp_path: Path, tiny_model_dir: Path, config: dict[str, object], said: str
) -> None:
    """A BERT folder loaded with a fresh head, and the run failed at its first reply (found by QA)."""
    folder = tmp_path / "encoder"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "config.json").write_text(json.dumps(json.loads((folder / "config.json").read_text()) | config))
    with pytest.raises(BotSpecError, match=f"bot 'llm': cannot load model .*{said}"):
        make_bot(f"llm:model={folder}", "tic-tac-toe")


def test_a_bot_spec_naming_no_model_fails_without_importing_torch(tmp_path: Path) -> None:
    """Importing torch came first, and a mistyped folder took seconds to be told."""
    script = (
        "import sys; from bots.registry import BotSpecError, make_bot\n"
        "try:\n"
        f"    make_bot('llm:model={tmp_path / 'missing'}', 'tic-tac-toe')\n"
        "except BotSpecError as error:\n"
        "    print(error)\n"
        "assert 'torch' not in sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("bot 'llm': cannot load model ") and "(no such folder)" in done.stdout


def test_a_bot_of_a_model_loaded_already_is_made_after_its_folder_is_deleted(tmp_path: Path, tiny_model_dir: Path) -> None:
    """A training run deletes its older checkpoints: a bot run playing one failed every match
    it started after, though the model was loaded in it (found by a review)."""
    folder = tmp_path / "checkpoint-3"
    shutil.copytree(tiny_model_dir, folder)
    first = make_bot(f"llm:model={folder}", "tic-tac-toe")
    shutil.rmtree(folder)
    assert make_bot(f"llm:model={folder}", "tic-tac-toe", seed=1).policy is first.policy


def test_listing_bots_finds_llm_without_importing_torch() -> None:
    script = (
        "import sys; from bots.registry import all_bots, get; "
        "assert get('llm').__name__ == 'LLMBot', [b.name for b in all_bots()]; "
        "heavy = sorted(m for m in ('torch', 'transformers', 'trainer.policy') if m in sys.modules); "
        "assert not heavy, heavy"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.trio
async def test_the_model_plays_a_full_match_over_the_wire_with_legal_moves_only(arena: Arena, tiny_model_dir: Path) -> None:
    names = ("tiny-llm", "coin")
    policies = [
        make_bot(spec, "connect-four", seed=7 + i).act for i, spec in enumerate((f"llm:model={tiny_model_dir}", "random"))
    ]
    tokens = [await arena.register(name) for name in names]
    runs: dict[str, BotRun] = {}

    async def play(i: int) -> None:
        runs[names[i]] = await run_bot(policies[i], arena.url, names[i], tokens[i], games=["connect-four"], matches=1)

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            for i in range(2):
                nursery.start_soon(play, i)
    end = runs["tiny-llm"].results[0]
    assert end["status"] == "finished" and end["reason"] == "complete", end
    assert runs["tiny-llm"].errors == []
    record = Store(arena.db, read_only=True).match(end["match"])
    assert record is not None
    seat = record["players"].index("tiny-llm")
    mine = [turn for turn in record["turns"] if turn["seat"] == seat]
    assert len(mine) >= 4
    for turn in mine:
        assert turn["accepted"] and turn["rejection"] is None and not turn["format_error"]
        assert turn["action"] in turn["legal_actions"] and turn["raw"] == f"[{turn['action']}]"
        assert turn["observation"] in json.loads(turn["prompt"])[1]["content"]
        assert len(turn["logprobs"]) == turn["tokens_out"] > 0


@pytest.mark.slow
def test_arena_play_seats_the_model_from_the_command_line(tiny_model_dir: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena.cli",
            "play",
            "tic-tac-toe",
            "--seat",
            f"llm:model={tiny_model_dir}",
            "--seat",
            "random",
            "--json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "finished" and result["reason"] == "complete"
    assert result["players"][0] == f"llm:model={tiny_model_dir}"
    model_turns = [turn for turn in result["turns"] if turn["seat"] == 0]
    assert model_turns and all(turn["accepted"] and turn["prompt"] and turn["logprobs"] for turn in model_turns)
