"""The training loop end to end on the tiny model: config errors, determinism, the CLI,
and training from turns a model played into the store."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch
import trio

import games
from arena.cli import main
from arena.match import play_match
from arena.seats import LocalSeat
from arena.store import Store
from bots.registry import make_bot
from trainer.config import OpponentSetting, StoreSetting, TrainConfigError, load, parse
from trainer.policy import Policy
from trainer.rollout import MatchPlan, SeatCrashed, SeatPlan, play_rollouts
from trainer.run import EVAL_KEYS, plan_matches, train
from trainer.store_samples import store_samples


def config_text(model: Path, out: Path, **changes: str) -> str:
    """A small IPD run; ``changes`` replace or add top-level keys (TOML values as text)."""
    top = {
        "name": '"test"',
        "model": f'"{model}"',
        "out_dir": f'"{out}"',
        "updates": "2",
        "matches_per_update": "4",
        "concurrency": "4",
        "checkpoint_every": "1",
        **changes,
    }
    sections = [
        "[[games]]",
        'name = "iterated-prisoners-dilemma"',
        "config = { rounds = 3 }",
        "[estimator]",
        'name = "mars"',
        "[opponents]",
        'bots = ["tit-for-tat"]',
        "snapshot_every = 1",
        "[eval]",
        "every = 2",
        "matches = 2",
        'bots = ["tit-for-tat"]',
    ]
    return "\n".join([*(f"{key} = {value}" for key, value in top.items()), *sections]) + "\n"


def write_config(tmp_path: Path, model: Path, **extra: str) -> Path:
    path = tmp_path / "train.toml"
    path.write_text(config_text(model, tmp_path / "run", **extra))
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"updates": "0"}, "updates must be at least 1"),
        ({"updates": '"two"'}, "updates: must be int"),
        ({"learning_rate": "1"}, "learning_rate: unknown key"),
        ({"group_size": "3"}, "must be a multiple of group_size"),
        ({"matches_per_update": "1000000000000"}, "matches_per_update must be at most 10,000"),  # it tried 7 TiB
        ({"updates": "1000000000000000000000"}, "updates must be at most 1,000,000"),
        ({"dtype": '"float16"'}, "dtype float16 cannot be trained"),  # AdamW's step turned every weight to NaN
    ],
)
def test_bad_top_level_keys_name_the_file_and_key(tmp_path: Path, tiny_model_dir: Path, change: dict, message: str) -> None:
    path = write_config(tmp_path, tiny_model_dir, **change)
    with pytest.raises(TrainConfigError, match=message) as error:
        load(path)
    assert str(path) in str(error.value)


def test_a_model_folder_that_will_not_load_is_said_as_the_model_key_and_makes_no_run(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Said with status 1, naming neither the file nor the key (found by a QA helper)."""
    model = shutil.copytree(tiny_model_dir, tmp_path / "model")
    (model / "tokenizer.json").write_text("{")  # a save cut short
    path = write_config(tmp_path, model)
    assert main(["train", "run", str(path)]) == 2
    assert f"arena: error: {path}: model: {model}: cannot read its tokenizer" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_the_command_lines_out_stands_for_an_out_dir_the_file_lacks(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--out is "override out_dir", yet a file without one was refused: "out_dir: missing"."""
    path = tmp_path / "train.toml"
    path.write_text("\n".join(line for line in config_text(tiny_model_dir, tmp_path).splitlines() if "out_dir" not in line))
    with pytest.raises(TrainConfigError, match="out_dir"):
        load(path)
    assert load(path, {"out_dir": "elsewhere", "updates": 5}).out_dir == "elsewhere"
    with pytest.raises(TrainConfigError, match="updates must be at least 1"):
        load(path, {"out_dir": "elsewhere", "updates": 0})
    with pytest.raises(SystemExit) as exited:  # it blamed the file: "f.toml: the file: updates must be ..."
        main(["train", "run", str(path), "--updates", "0"])
    assert exited.value.code == 2 and "argument --updates: must be at least 1, got 0" in capsys.readouterr().err


def test_bad_sections_are_named(tiny_model_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    store = Store(db)
    seats = [LocalSeat(make_bot("random", "tic-tac-toe", k), name=name, threaded=False) for k, name in enumerate("xy")]
    store.finish_match(trio.run(lambda: play_match(games.get("tic-tac-toe"), seats)))
    store.close()
    run_folder = tmp_path / "a-run"
    run_folder.mkdir()
    (run_folder / "config.json").write_text("{}")
    base = {
        "name": "t",
        "model": str(tiny_model_dir),
        "out_dir": str(tmp_path),
        "games": [{"name": "iterated-prisoners-dilemma"}],
    }
    cases = [
        ({"games": [{"name": "prisoners-dilema"}]}, r"games\[0\]: unknown game"),
        ({"games": [{"name": "iterated-prisoners-dilemma", "config": {"rounds": 0}}]}, r"games\[0\]: .*rounds"),
        ({"estimator": {"name": "marz"}}, "did you mean 'mars'"),
        ({"opponents": {"bots": ["tit-for-tatt"]}}, r"opponents.bots\[0\]"),
        ({"opponents": {"sampling": "best"}}, "sampling 'best' is unknown"),
        ({"ppo": {"lr": "fast"}}, "ppo.lr: must be float"),
        ({"ppo": {"lr": float("nan")}}, "ppo.lr: must be a finite number, got nan"),
        ({"acting": {"temperature": float("inf")}}, "acting.temperature: must be a finite number, got inf"),
        ({"ppo": {"epochs": 0}}, "ppo: epochs must be at least 1, got 0"),  # was the whole settings' repr
        ({"ppo": {"lr": -1e-3}}, "ppo: lr must be > 0, got -0.001"),
        ({"ppo": {"max_grad_norm": 0}}, "ppo: max_grad_norm must be > 0, got 0"),
        ({"model": str(tmp_path / "nothing")}, "model: .* is not a model folder"),
        ({"model": str(run_folder)}, r"model: .* is not a model folder .*\(no weights, no tokenizer files\)"),
        ({"store": {"db": str(tmp_path / "none.db"), "bot": "x"}}, "store.db: no such file"),
        ({"estimator": {"name": "leave_one_out"}}, "needs group_size >= 2"),
        (
            {"estimator": {"name": "leave_one_out"}, "group_size": 2, "store": {"db": str(db), "bot": "x"}},
            "cannot use \\[store\\]",
        ),
        ({"estimator": {"name": "mars", "gamma": 2.0}}, r"estimator: gamma must be in \(0, 1\]"),
        ({"estimator": {"name": "mars", "normalization": "bogus"}}, "estimator.normalization: must be one of 'distinct'"),
        ({"estimator": {"name": "mars", "gama": 0.5}}, "estimator.gama: unknown parameter of mars; did you mean 'gamma'"),
        ({"estimator": {"name": "spiral", "alpha": "high"}}, "estimator.alpha: must be float"),
        ({"alignment": {"gamma": 5}}, r"alignment: gamma must be in \(0, 1\]"),
        ({"ppo": {"clip_eps": -0.2}}, "ppo: clip_eps must be between 0 and 1, got -0.2"),
        ({"ppo": {"clip_eps": 5}}, "ppo: clip_eps must be between 0 and 1, got 5"),  # no lower clip at all
        ({"model": str(run_folder / "config.json")}, r"model: .* is a file, not a model folder"),
        ({"ppo": {"dual_clip": 0.5}}, "ppo: dual_clip must be greater than 1"),
        ({"ppo": {"kl_coef": -1}}, "ppo: kl_coef must be >= 0"),
        ({"acting": {"temperature": 0}}, "acting: temperature must be > 0"),
        ({"acting": {"max_retries": 101}}, "acting: max_retries must be from 0 to 100, got 101"),  # else a traceback per match
        ({"opponents": {"max_snapshots": 0}}, "opponents: max_snapshots must be at least 1"),
        ({"opponents": {"snapshot_every": -1}}, "opponents: snapshot_every must be at least 0"),
        ({"opponents": {"bots": ["random", "random"]}}, "opponents: bots lists 'random' twice"),
        # two spellings were two entries, the bot sampled twice as often (found by a QA helper)
        ({"opponents": {"bots": ["random", "random:"]}}, r"opponents: bots lists 'random:' twice \(also as 'random'\)"),
        ({"opponents": {"models": [str(tiny_model_dir)] * 2}}, "opponents: models: .* is listed twice"),
        ({"device": "gpu"}, "device: 'gpu' is not a torch device"),
        ({"checkpoint_every": -1}, "checkpoint_every must be at least 0"),
        ({"seed": -1}, "seed must be at least 0"),  # else refused by the opponent pool once the models had loaded
        ({"ppo": {"weight_decay": -0.1}}, "ppo: weight_decay must be >= 0"),  # else refused by AdamW, naming no key
        ({"eval": {"every": -1}}, "eval: every must be at least 0"),
        ({"eval": {"matches": 0}}, "eval: matches must be at least 1"),
        ({"eval": {"every": 2}}, "eval: every = 2 plays a gauntlet against bots, and bots is empty"),  # it never ran
        ({"store": {"db": str(db), "bot": "nobody"}}, "store.bot: no bot named 'nobody'"),
        (
            {"store": {"db": str(db), "bot": "x", "exclude_opponents": ["nobody"]}},
            "store.exclude_opponents: no bot named 'nobody'",
        ),
        ({"store": {"db": str(db), "bot": "x", "game": "chess"}}, "store.game: unknown game 'chess'"),
    ]
    for change, message in cases:
        with pytest.raises(TrainConfigError, match=message):
            parse({**base, **change}, "f.toml")
    with pytest.raises(TrainConfigError, match="out_dir: missing"):
        parse({k: v for k, v in base.items() if k != "out_dir"}, "f.toml")


def _comparable(rows: list[dict]) -> list[dict]:
    timing = ("rollout_s", "update_s", "turns_per_s")
    return [{k: v for k, v in row.items() if k not in timing} for row in rows]


def _close(a: object, b: object) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-4)
    return a == b


def test_two_runs_with_one_seed_write_the_same_metrics(tmp_path: Path, tiny_model_dir: Path) -> None:
    config = load(write_config(tmp_path, tiny_model_dir))
    first = train(dataclasses.replace(config, out_dir=str(tmp_path / "a")))
    second = train(dataclasses.replace(config, out_dir=str(tmp_path / "b")))
    assert len(first.metrics) == len(second.metrics) == 4  # eval 0, update 1, update 2, eval 2
    for a, b in zip(_comparable(first.metrics), _comparable(second.metrics), strict=True):
        assert _close(a, b), (a, b)
    assert {"snapshot-1", "tit-for-tat"} <= set(first.metrics[2]["opponents"])  # the snapshot joined the pool
    # against itself the learner has no win rate: seat 0's outcome stood for it (found by QA)
    against_self = [row["opponents"]["self"] for row in first.metrics if "self" in row.get("opponents", {})]
    assert against_self and all(line["win_rate"] is None for line in against_self)
    other = train(dataclasses.replace(config, out_dir=str(tmp_path / "c"), seed=1, updates=1))  # eval 0, update 1, eval 1
    assert not all(_close(a, b) for a, b in zip(_comparable(first.metrics[:2]), _comparable(other.metrics[:2]), strict=True))


def test_cli_run_writes_metrics_checkpoints_and_plots(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture
) -> None:
    path = write_config(tmp_path, tiny_model_dir)
    assert main(["train", "run", str(path), "--updates", "2"]) == 0
    said = capsys.readouterr().err  # the gauntlet before update 1 takes minutes on a CPU: said first, not silent
    assert said.startswith("playing the gauntlet first (update 0, ") and "update 1/2" in said
    run = tmp_path / "run"
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["kind"] for r in rows] == ["eval", "update", "update", "eval"]
    for key in ("return_mean", "entropy", "grad_norm", "approx_kl", "opponents"):
        assert key in rows[1]
    for folder in ("update-1", "update-2", "final"):
        reloaded = Policy.load(run / "checkpoints" / folder)
        assert reloaded.tokenizer.eos_token_id is not None
    assert main(["train", "plot", str(run)]) == 0
    for name in ("return.png", "win_rate.png", "kl.png", "entropy.png", "grad_norm.png"):
        assert (run / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    capsys.readouterr()
    (tmp_path / "bad.toml").write_text('name = "x"\n')
    assert main(["train", "run", str(tmp_path / "bad.toml")]) == 2
    assert "bad.toml: model: missing" in capsys.readouterr().err
    assert main(["train", "plot", str(tmp_path / "nowhere")]) == 2
    assert "no metrics.jsonl" in capsys.readouterr().err
    assert main(["train", "run", str(path)]) == 2  # a rerun never mixes with, nor empties, the earlier run
    assert f"{path}: out_dir: '{run}' is not empty" in capsys.readouterr().err  # the file, as every other error
    assert (run / "checkpoints" / "update-2").is_dir()
    assert main(["train", "run", str(path), "--updates", "1", "--overwrite", "--json"]) == 0
    assert not (run / "return.png").exists() and not (run / "checkpoints" / "update-2").exists()
    kinds = [json.loads(line)["kind"] for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert kinds == ["eval", "update", "eval"]  # eval.every is 2: the last update is evaluated all the same


def test_void_matches_of_self_play_score_nobody_and_train_on_nothing(tmp_path: Path, tiny_model_dir: Path) -> None:
    """A young model that writes its moves fails the format in both seats of a simultaneous step
    at once: the match is void, and its outcome word stopped the run ("unknown match outcome")."""
    config = load(write_config(tmp_path, tiny_model_dir))
    acting = dataclasses.replace(config.acting, score_limit=0, max_retries=0)  # generated replies, no second try
    result = train(dataclasses.replace(config, updates=1, checkpoint_every=0, acting=acting))
    (update,) = [row for row in result.metrics if row["kind"] == "update"]
    assert update["void"] >= 1 and update["matches"] == 4 and result.final.is_dir()


def test_a_stop_inside_an_updates_ppo_step_keeps_the_weights_under_that_updates_name(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """They were saved as interrupted-N, the last whole update, though update N+1's first
    optimizer steps had changed them."""
    from trainer.run import Interrupted
    from trainer.update import Learner

    def stopped_partway(self: Learner, samples: object, advantages: object) -> dict[str, float]:
        raise KeyboardInterrupt

    monkeypatch.setattr(Learner, "update", stopped_partway)
    config = dataclasses.replace(load(write_config(tmp_path, tiny_model_dir)), checkpoint_every=0)
    with pytest.raises(Interrupted) as stopped:
        train(config)
    kept = Path(config.out_dir) / "checkpoints" / "interrupted-in-1"
    assert (stopped.value.update, stopped.value.kept) == (0, kept) and kept.is_dir()


def test_training_changes_the_final_checkpoint(tmp_path: Path, tiny_model_dir: Path) -> None:
    config = dataclasses.replace(load(write_config(tmp_path, tiny_model_dir)), updates=1, checkpoint_every=0)
    result = train(config)
    before = Policy.load(tiny_model_dir)
    after = Policy.load(result.final)
    rows = [(tuple(range(5, 30)), before.action_ids("cooperate"))]
    assert not torch.allclose(before.reply_logprobs(rows)[0], after.reply_logprobs(rows)[0])


def test_stored_turns_carry_the_acting_policys_logprobs(tmp_path: Path, tiny_model_dir: Path) -> None:
    """A model plays through play_match into a real store; the loader gives back its turns
    with the log-probs it acted with, which a fresh forward pass reproduces."""
    from trainer.llm_bot import LLMBot

    db = tmp_path / "arena.db"
    store = Store(db)
    game = games.get("iterated-prisoners-dilemma")
    model = make_bot(f"llm:model={tiny_model_dir}", game.spec.name, seed=3)
    assert isinstance(model, LLMBot)
    seats = [LocalSeat(model, "the-model"), LocalSeat(make_bot("tit-for-tat", game.spec.name), "tit-for-tat")]
    result = trio.run(lambda: play_match(game, seats, config={"rounds": 4}, seed=5))
    store.finish_match(result)
    store.close()
    policy = Policy.load(tiny_model_dir)
    samples = store_samples(StoreSetting(db=str(db), bot="the-model"), policy)
    assert len(samples) == 4
    assert sum(s.reward for s in samples) == pytest.approx(result.returns[0])
    fresh = policy.score([(s.prompt_ids, s.action_ids) for s in samples])
    for sample, logprobs in zip(samples, fresh, strict=True):
        assert sample.logprobs == pytest.approx(logprobs, abs=1e-5)
        assert sample.opponent == "tit-for-tat"
        assert sample.entropy is None  # the store kept no distribution over the legal actions
    setting = StoreSetting(db=str(db), bot="the-model", per_update=2)
    config = dataclasses.replace(load(write_config(tmp_path, tiny_model_dir, updates="1")), store=setting)
    (update,) = [row for row in train(config).metrics if row["kind"] == "update"]
    assert update["stored_samples"] == 4 and update["samples"] > 4  # whole trajectories: the match's 4 turns (found by QA)


def test_rollouts_from_one_seed_are_identical(tiny_model_dir: Path) -> None:
    policy = Policy.load(tiny_model_dir)
    plans = [MatchPlan(i, "kuhn-poker", 40 + i, (SeatPlan("learner", "self"), SeatPlan("learner", "self"))) for i in range(6)]
    first = trio.run(lambda: play_rollouts(plans, policy, seed=9, concurrency=3))
    second = trio.run(lambda: play_rollouts(plans, policy, seed=9, concurrency=6))
    assert [r.result.actions for r in first] == [r.result.actions for r in second]
    flat = [[lp for s in r.samples for lp in s.logprobs] for r in (*first, *second)]
    for a, b in zip(flat[: len(first)], flat[len(first) :], strict=True):
        assert a == pytest.approx(b, abs=1e-5)


def test_the_documented_example_config_is_valid(tiny_model_dir: Path) -> None:
    import tomllib

    example = Path(__file__).parents[2] / "trainer" / "train-ipd.toml"
    data = tomllib.loads(example.read_text())
    config = parse({**data, "model": str(tiny_model_dir)}, str(example))
    assert config.opponents.sampling == "pfsp" and config.estimator.name == "mars"


def test_rollouts_sharing_a_seed_share_the_game_the_learners_seat_and_the_opponent(tiny_model_dir: Path, tmp_path: Path) -> None:
    from trainer.opponents import Opponent

    config = parse(
        {
            "name": "loo",
            "model": str(tiny_model_dir),
            "out_dir": str(tmp_path),
            "group_size": 2,
            "matches_per_update": 8,
            "games": [{"name": "kuhn-poker"}, {"name": "iterated-prisoners-dilemma", "config": {"rounds": 3}}],
            "estimator": {"name": "leave_one_out"},
        },
        "loo.toml",
    )
    opponents = [Opponent(spec, "bot", spec) for spec in ("random", "random", "tit-for-tat", "tit-for-tat")] * 2
    plans = plan_matches(config, opponents, 1, group_size=config.group_size)
    for first, second in zip(plans[::2], plans[1::2], strict=True):
        assert (first.seed, first.game, first.seats) == (second.seed, second.game, second.seats)
    assert len({p.seed for p in plans}) == 4 and {p.game for p in plans} == {"kuhn-poker", "iterated-prisoners-dilemma"}
    learner_seats = {(p.game, [s.kind for s in p.seats].index("learner")) for p in plans}
    assert learner_seats == {
        ("kuhn-poker", 0),
        ("kuhn-poker", 1),
        ("iterated-prisoners-dilemma", 0),
        ("iterated-prisoners-dilemma", 1),
    }
    result = train(dataclasses.replace(config, updates=1, opponents=dataclasses.replace(config.opponents, bots=["random"])))
    assert result.metrics[-1]["kind"] == "update" and result.metrics[-1]["samples"] > 0


def test_the_learners_seat_alternates_across_updates_and_gauntlets(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted within each update, one group per update had the learner in seat 0 of every
    match, and a bot met once per gauntlet was met from one seat only."""
    import trainer.run

    planned: list[tuple[int, list[int]]] = []

    def recorded(*args: Any, **kwargs: Any) -> list[Any]:
        plans = plan_matches(*args, **kwargs)
        planned.append((args[2], [[s.kind for s in plan.seats].index("learner") for plan in plans]))
        return plans

    monkeypatch.setattr(trainer.run, "plan_matches", recorded)
    config = parse(
        {
            "name": "seats",
            "model": str(tiny_model_dir),
            "out_dir": str(tmp_path),
            "updates": 2,
            "group_size": 2,
            "matches_per_update": 2,
            "games": [{"name": "kuhn-poker"}],
            "opponents": {"self_play": False, "bots": ["random"]},
            "eval": {"bots": ["random"], "matches": 1, "every": 1},
        },
        "seats.toml",
    )
    train(config)
    training = [seats for update, seats in planned if update < EVAL_KEYS]
    gauntlets = [seats for update, seats in planned if update >= EVAL_KEYS]
    assert training == [[0, 0], [1, 1]] and gauntlets == [[0], [1], [0]]


def test_a_model_that_fails_in_a_rollout_stops_the_run_and_saves_no_final(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forfeited as a crash, every match was lost with nothing to learn, and the run ended
    with a "final" checkpoint as if trained (a tokenizer not fitting its weights, say)."""

    def out_of_memory(self: Policy, requests: Any) -> Any:
        raise RuntimeError("CUDA out of memory")

    monkeypatch.setattr(Policy, "decide", out_of_memory)
    config = parse(
        {
            "name": "crash",
            "model": str(tiny_model_dir),
            "out_dir": str(tmp_path / "run"),
            "updates": 1,
            "matches_per_update": 2,
            "games": [{"name": "kuhn-poker"}],
            "opponents": {"self_play": False, "bots": ["random"]},
        },
        "crash.toml",
    )
    with pytest.raises(SeatCrashed, match=r"the learner failed in a rollout of kuhn-poker \(seat \d\): RuntimeError: CUDA"):
        train(config)
    assert not (tmp_path / "run" / "checkpoints" / "final").exists()


def test_a_config_error_found_at_parse_time_exits_2_and_writes_nothing(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture
) -> None:
    path = write_config(tmp_path, tiny_model_dir)
    path.write_text(path.read_text().replace('name = "mars"', 'name = "mars"\ngama = 0.5'))
    assert main(["train", "run", str(path)]) == 2
    assert f"{path}: estimator.gama: unknown parameter of mars; did you mean 'gamma'?" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_model_folder_that_is_no_causal_language_model_is_refused_before_anything_loads(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A BERT folder passed the check, loaded with a fresh head and failed at its first reply (found by QA)."""
    encoder = tmp_path / "bert"
    shutil.copytree(tiny_model_dir, encoder)
    config = json.loads((encoder / "config.json").read_text())
    (encoder / "config.json").write_text(json.dumps(config | {"architectures": ["BertModel"]}))
    path = write_config(tmp_path, encoder)
    assert main(["train", "run", str(path)]) == 2
    assert "model: " in (said := capsys.readouterr().err) and "holds a BertModel, not a causal language model" in said
    assert not (tmp_path / "run").exists()


def test_overwrite_clears_only_an_earlier_run_that_holds_none_of_this_runs_inputs(tmp_path: Path, tiny_model_dir: Path) -> None:
    from trainer.config import check_out_dir

    out = tmp_path / "run"
    out.mkdir()
    config = load(write_config(tmp_path, tiny_model_dir))
    check_out_dir(config, overwrite=False)  # empty is fine
    (out / "notes.txt").write_text("mine")
    with pytest.raises(TrainConfigError, match="holds no earlier run"):
        check_out_dir(config, overwrite=True)
    (out / "metrics.jsonl").write_text("")
    check_out_dir(config, overwrite=True)
    shutil.copytree(tiny_model_dir, out / "checkpoints" / "final")
    with pytest.raises(TrainConfigError, match="which this run reads; --overwrite would delete it"):
        check_out_dir(dataclasses.replace(config, model=str(out / "checkpoints" / "final")), overwrite=True)
    final = str(out / "checkpoints" / "final")  # as an llm bot's model: deleted with the earlier run (found by QA)
    for section, field in (("opponents", "bots"), ("eval", "bots")):
        bots = dataclasses.replace(getattr(config, section), **{field: [f"llm:model={final}"]})
        with pytest.raises(TrainConfigError, match="which this run reads; --overwrite would delete it"):
            check_out_dir(dataclasses.replace(config, **{section: bots}), overwrite=True)


def test_only_a_finished_run_saves_final_and_ctrl_c_keeps_where_it_stopped(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from trainer.run import Interrupted

    path = write_config(tmp_path, tiny_model_dir, checkpoint_every="0")
    config = load(path)

    def fail(progress: object) -> None:
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        train(config, progress=fail)
    run = Path(config.out_dir)
    assert (run / "metrics.jsonl").read_text() and not (run / "checkpoints").exists()

    def stop(progress: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("arena.cli._train_progress", stop)
    assert main(["train", "run", str(path), "--overwrite"]) == 130
    kept = run / "checkpoints" / "interrupted-1"
    assert f"kept {kept} after 1 of 2 updates (no final checkpoint)" in capsys.readouterr().err
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["interrupted-1"]
    assert Policy.load(kept).tokenizer.eos_token_id is not None
    with pytest.raises(Interrupted) as stopped:
        train(dataclasses.replace(config, out_dir=str(tmp_path / "early")), progress=stop)
    assert (stopped.value.update, stopped.value.kept) == (1, tmp_path / "early" / "checkpoints" / "interrupted-1")


def test_models_of_two_runs_both_named_final_play_under_distinct_names(tmp_path: Path, tiny_model_dir: Path) -> None:
    from trainer.run import Trainer

    folders = [tmp_path / run / "checkpoints" / "final" for run in ("a", "b")]
    for folder in folders:
        shutil.copytree(tiny_model_dir, folder)
    config = dataclasses.replace(
        load(write_config(tmp_path, tiny_model_dir)),
        opponents=OpponentSetting(self_play=False, bots=["tit-for-tat"], models=[str(f) for f in folders]),
        matches_per_update=6,
    )
    trainer = Trainer(config)
    assert [entry.name for entry in trainer.pool.entries] == ["tit-for-tat", "a/checkpoints/final", "b/checkpoints/final"]
    row = trainer.step(1)
    trainer.close()
    assert {"a/checkpoints/final", "b/checkpoints/final"} <= set(row["opponents"])


def test_a_store_bot_without_usable_turns_is_refused_before_out_dir_is_made(tmp_path: Path, tiny_model_dir: Path) -> None:
    db = tmp_path / "arena.db"
    store = Store(db)
    game = games.get("iterated-prisoners-dilemma")
    seats = [LocalSeat(make_bot(name, game.spec.name), name) for name in ("tit-for-tat", "always-defect")]
    store.finish_match(trio.run(lambda: play_match(game, seats, config={"rounds": 3}, seed=1)))
    store.close()
    config = dataclasses.replace(load(write_config(tmp_path, tiny_model_dir)), store=StoreSetting(db=str(db), bot="tit-for-tat"))
    with pytest.raises(TrainConfigError, match=r"store.bot: none of the 3 turns 'tit-for-tat' took .* 3 kept no prompt"):
        train(config)
    # filters that leave no match were said as turns without log-probs, "none of the 0 turns" (found by a QA helper)
    held_out = dataclasses.replace(config.store, exclude_opponents=["always-defect"])
    with pytest.raises(TrainConfigError, match=r"store: no finished match in .* passes \[store\]'s filters"):
        train(dataclasses.replace(config, store=held_out))
    assert not Path(config.out_dir).exists()


def test_a_turn_based_games_turns_are_numbered_per_seat_so_alignment_pairs_the_seats(tiny_model_dir: Path) -> None:
    """In tic-tac-toe the match steps of seat 0 are 0, 2, 4 and of seat 1 are 1, 3, 5: never one
    step for both, so Advantage Alignment found no co-player advantage and did nothing. The
    estimators see each seat's own turn index k; a simultaneous
    game keeps its rounds."""
    from trainer.advantages import Alignment, estimate_advantages
    from trainer.run import turn_batch

    policy = Policy.load(tiny_model_dir)
    self_play = (SeatPlan("learner", "self"), SeatPlan("learner", "self"))
    plans = [MatchPlan(i, "tic-tac-toe", 11, self_play) for i in range(4)]
    plans += [MatchPlan(4 + i, "iterated-prisoners-dilemma", 12, self_play, {"rounds": 3}) for i in range(2)]
    samples = [s for r in trio.run(lambda: play_rollouts(plans, policy, seed=2)) for s in r.samples]
    for match in range(6):
        for seat in (0, 1):
            steps = [s.step for s in samples if s.match == match and s.seat == seat]
            assert steps == list(range(len(steps))) and steps, (match, seat)
    tic_tac_toe = turn_batch([s for s in samples if s.game == "tic-tac-toe"])
    plain, _ = estimate_advantages("dr_mas", tic_tac_toe)
    aligned, _ = estimate_advantages("dr_mas", tic_tac_toe, alignment=Alignment(beta=2.0))
    assert not (plain == aligned).all()


def test_stored_turns_of_a_turn_based_game_are_numbered_per_seat(tmp_path: Path, tiny_model_dir: Path) -> None:
    from trainer.llm_bot import LLMBot

    db = tmp_path / "arena.db"
    store = Store(db)
    game = games.get("tic-tac-toe")
    for seed in range(2):
        model = make_bot(f"llm:model={tiny_model_dir}", game.spec.name, seed=seed)
        assert isinstance(model, LLMBot)
        seats = [LocalSeat(make_bot("random", game.spec.name, seed=seed), "random"), LocalSeat(model, "the-model")]
        store.finish_match(trio.run(lambda: play_match(game, seats, seed=seed)))  # noqa: B023
    store.close()
    samples = store_samples(StoreSetting(db=str(db), bot="the-model"), Policy.load(tiny_model_dir))
    for match in {s.match for s in samples}:
        steps = [s.step for s in samples if s.match == match]
        assert steps == list(range(len(steps)))


def test_stored_turns_join_an_update_as_whole_trajectories() -> None:
    """Three stored games of three turns, the win paid on the last: a slice of 4 turns used to
    cut the second game after its first turn, whose return the estimators then saw as 0."""
    from trainer.rollout import Sample
    from trainer.run import stored_slice

    stored = [
        Sample(1_000_000_000 + m, 7, "tic-tac-toe", 0, k, (1,), (2,), (-0.5,), None, float(k == 2), 1.0, "x")
        for m in range(3)
        for k in range(3)
    ]
    first, after = stored_slice(stored, 0, 4)
    second, _ = stored_slice(stored, after, 4)
    for part in (first, second):
        games_in = {s.match for s in part}
        assert len(part) == 3 * len(games_in) == 6
        assert all(sum(s.reward for s in part if s.match == m) == 1.0 for m in games_in)
    assert {s.match for s in second} == {1_000_000_002, 1_000_000_000}
    everything, _ = stored_slice(stored, 0, 100)
    assert everything == stored  # each trajectory once, however many turns are asked for


def test_sigterm_stops_a_run_like_ctrl_c_keeping_where_it_stopped(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """A scheduler, `timeout` or `kill` stops a run with SIGTERM: without this, the weights
    trained since the last checkpoint (with checkpoint_every = 0, the whole run) were lost."""
    import signal

    def unhandled(signum: int, frame: object) -> None:
        raise RuntimeError("SIGTERM reached the default action")

    monkeypatch.setattr("arena.cli._train_progress", lambda progress: signal.raise_signal(signal.SIGTERM))
    previous = signal.signal(signal.SIGTERM, unhandled)
    try:
        assert main(["train", "run", str(write_config(tmp_path, tiny_model_dir, checkpoint_every="0"))]) == 130
        assert signal.getsignal(signal.SIGTERM) is unhandled
    finally:
        signal.signal(signal.SIGTERM, previous)
    kept = tmp_path / "run" / "checkpoints" / "interrupted-1"
    assert f"kept {kept} after 1 of 2 updates" in capsys.readouterr().err
    assert sorted(p.name for p in kept.parent.iterdir()) == ["interrupted-1"]


def test_a_loss_that_is_not_a_number_stops_the_run_before_the_weights_take_it(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """A run that diverged (a learning rate far too high) went on and saved a ``final`` of NaN weights, exit 0."""
    import trainer.update

    real = trainer.update.policy_loss

    def diverging(*args: object, **kwargs: object) -> tuple[torch.Tensor, dict[str, float]]:
        loss, stats = real(*args, **kwargs)  # type: ignore[arg-type]
        return loss * float("nan"), stats

    monkeypatch.setattr(trainer.update, "policy_loss", diverging)
    path = write_config(tmp_path, tiny_model_dir, checkpoint_every="0")
    assert main(["train", "run", str(path)]) == 1
    err = capsys.readouterr().err
    assert "training diverged at update 1: the loss is nan" in err and "lower ppo.lr" in err
    assert not (tmp_path / "run" / "checkpoints" / "final").exists()


def test_a_gauntlet_whose_every_match_was_void_is_plotted_without_it(tmp_path: Path) -> None:
    """Every match void logged return and win rate 0, read as measured losses; null now, and left out of the plot."""
    from trainer.plot import METRICS_FILE, plot_run

    rows = [
        {
            "kind": "eval",
            "update": 0,
            "bots": {"random": {"matches": 0, "void": 2, "return": None, "return_ci95": None, "win_rate": None}},
        },
        {
            "kind": "update",
            "update": 1,
            "return_mean": 0.5,
            "opponents": {"self": {"matches": 2, "return": 0.0, "win_rate": None}},
        },
        {
            "kind": "eval",
            "update": 1,
            "bots": {"random": {"matches": 2, "void": 0, "return": 1.0, "return_ci95": 0.0, "win_rate": 1.0}},
        },
    ]
    (tmp_path / METRICS_FILE).write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert {path.name for path in plot_run(tmp_path)} >= {"return.png", "win_rate.png"}


@pytest.mark.parametrize("updates", [(1,), (1, 2)], ids=["one update", "two updates"])
def test_the_update_axis_counts_in_whole_updates_and_a_single_update_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, updates: tuple[int, ...]
) -> None:
    """Two updates drew ticks at 1.2, 1.4, 1.6, 1.8; one update, ticks from 0.95 to 1.05 and no
    point at all (a line of one point, without a marker), beside a legend entry for a KL to
    a reference that the run had none of (found by a QA helper)."""
    import matplotlib.pyplot as plt

    from trainer.plot import METRICS_FILE, plot_run

    closed: list[Any] = []
    monkeypatch.setattr(plt, "close", closed.append)
    measured = {"return_mean": 0.5, "approx_kl": 0.01, "entropy": 0.6, "grad_norm": 0.3, "opponents": {}}
    rows = [{"kind": "update", "update": update, **measured} for update in updates]
    (tmp_path / METRICS_FILE).write_text("".join(json.dumps(row) + "\n" for row in rows))
    plot_run(tmp_path)
    assert closed and all(float(tick).is_integer() for fig in closed for tick in fig.axes[0].get_xticks())
    assert all(line.get_marker() not in (None, "None", "") for fig in closed for line in fig.axes[0].lines)
    kl = next(fig.axes[0] for fig in closed if fig.axes[0].get_ylabel() == "approx_kl")
    assert kl.get_legend_handles_labels()[1] == ["approx_kl"]


def test_a_plot_with_nothing_to_draw_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Self-play alone has no win rate, and generated turns no entropy: both plots were bare axes."""
    import matplotlib.pyplot as plt

    from trainer.plot import METRICS_FILE, plot_run

    closed: list[Any] = []
    monkeypatch.setattr(plt, "close", closed.append)
    alone = {"self": {"matches": 2, "return": 0.0, "win_rate": None}}
    measured = {"return_mean": 0.0, "approx_kl": 0.01, "entropy": None, "grad_norm": 0.3, "opponents": alone}
    rows = [{"kind": "update", "update": update, **measured} for update in (1, 2)]
    (tmp_path / METRICS_FILE).write_text("".join(json.dumps(row) + "\n" for row in rows))
    plot_run(tmp_path)
    said = {fig.axes[0].get_ylabel(): [text.get_text() for text in fig.axes[0].texts] for fig in closed}
    assert said["win rate"] == ["no win rate: the learner met only itself, which it cannot beat"]
    assert said["entropy"][0].startswith("no update measured it")
    assert said["mean return per match"] == said["approx_kl"] == said["grad_norm"] == []


def test_a_run_refused_for_its_folder_says_so_before_announcing_its_gauntlet(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "playing the gauntlet first", then refused the folder (found by a QA helper)."""
    path = write_config(tmp_path, tiny_model_dir)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "notes.txt").write_text("an earlier run")
    assert main(["train", "run", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"arena: error: {path}: out_dir: ") and "gauntlet" not in err
