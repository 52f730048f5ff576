"""The policy on the tiny model: legal-set scoring, keyed sampling, generation, save and load.

The reference for every log-prob is the plainest computation there is: one unpadded row
through ``model(input_ids).logits`` and a log-softmax, with no mask, positions or cache.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

import games
from arena.seats import Turn
from trainer.policy import Policy, Row, choice_logprobs
from trainer.rollout import request_for


@pytest.fixture(scope="module")
def policy(tiny_model_dir: Path) -> Policy:
    return Policy.load(tiny_model_dir)


def turns_of(game_name: str, count: int, seed: int = 0) -> list[Turn]:
    """The turns of the first ``count`` steps of a random-play match: prompts that grow."""
    game = games.get(game_name)
    state = game.new(game.Config(), seed=seed)
    rng = random.Random(seed)
    found: list[Turn] = []
    while len(found) < count and state.to_move():
        actions = {}
        for seat in state.to_move():
            turn = Turn.of(state, seat, match_id=f"{game_name}-{seed}")
            found.append(turn)
            legal = turn.legal_actions
            actions[seat] = rng.choice(legal) if legal else game.random_free_action(turn.observation, rng)
        state.step(actions)
    return found[:count]


def plain_logprobs(policy: Policy, prompt: tuple[int, ...], reply: tuple[int, ...]) -> list[float]:
    """Log-probs of ``reply``'s tokens after ``prompt``: one unpadded forward pass."""
    ids = torch.tensor([[*prompt, *reply]], dtype=torch.long)
    with torch.no_grad():
        logp = torch.log_softmax(policy.model(ids).logits[0].float(), dim=-1)
    return [float(logp[len(prompt) - 1 + i, token]) for i, token in enumerate(reply)]


def test_legal_probabilities_sum_to_one_and_match_a_plain_forward_pass(policy: Policy) -> None:
    turn = turns_of("tic-tac-toe", 3)[2]  # seven legal squares
    request, _ = request_for(policy, turn, (0, 1, 2))
    (decision,) = policy.decide([request])
    assert turn.legal_actions is not None and decision.action in turn.legal_actions
    assert len(decision.choice_probs) == len(turn.legal_actions) == 7
    assert sum(decision.choice_probs) == pytest.approx(1.0, abs=1e-9)

    totals = np.array([sum(plain_logprobs(policy, request.prompt_ids, policy.action_ids(a))) for a in turn.legal_actions])
    expected = np.exp(totals - totals.max())
    np.testing.assert_allclose(decision.choice_probs, expected / expected.sum(), atol=1e-5)
    assert decision.action_ids == policy.action_ids(decision.action)
    np.testing.assert_allclose(decision.logprobs, plain_logprobs(policy, request.prompt_ids, decision.action_ids), atol=1e-5)


def test_choice_logprobs_are_the_tempered_softmax_of_the_summed_logprobs() -> None:
    # totals -1 and -3 at temperature 2: -0.5 and -1.5; log(1 + e^-1) = 0.3132617
    logp = choice_logprobs(torch.tensor([-1.0, -3.0], dtype=torch.float64), 2.0)
    torch.testing.assert_close(logp, torch.tensor([-0.3132617, -1.3132617], dtype=torch.float64))


def test_the_learner_recomputes_the_distribution_a_scored_action_was_drawn_from(policy: Policy) -> None:
    """The acting log-prob of a scored turn is the chosen action's under the tempered softmax
    over the legal set, not its reply's raw token log-probs (their sum is far lower: the
    tokens every legal reply shares cancel in the softmax), and the learner's recomputation
    gives the same number, so the PPO ratio starts at exactly 1 between like distributions."""
    warm = Policy(policy.model, policy.tokenizer, temperature=2.0)
    turn = turns_of("tic-tac-toe", 3)[2]
    request, _ = request_for(warm, turn, (0, 1, 2))
    (decision,) = warm.decide([request])
    assert decision.options == tuple(warm.action_ids(a) for a in turn.legal_actions or ())
    choice = decision.options.index(decision.action_ids)
    assert decision.choice_logprob == pytest.approx(np.log(decision.choice_probs[choice]))
    assert decision.choice_logprob > sum(decision.logprobs)
    new, mask = warm.acting_logprobs([(request.prompt_ids, decision.action_ids, decision.options)])
    assert mask.tolist() == [[True]]
    assert float(new[0, 0]) == pytest.approx(decision.choice_logprob, abs=1e-5)


def test_generated_tokens_are_drawn_and_relearned_at_the_temperature(policy: Policy) -> None:
    warm = Policy(policy.model, policy.tokenizer, temperature=2.0, max_new_tokens=4)
    request, _ = request_for(warm, turns_of("item-negotiation", 1)[0], (4, 5))
    (decision,) = warm.decide([request])
    ids = torch.tensor([[*request.prompt_ids, *decision.action_ids]], dtype=torch.long)
    with torch.no_grad():
        tempered = torch.log_softmax(warm.model(ids).logits[0].float() / 2.0, dim=-1)
    start = len(request.prompt_ids) - 1
    expected = [float(tempered[start + i, token]) for i, token in enumerate(decision.action_ids)]
    np.testing.assert_allclose(decision.logprobs, expected, atol=1e-5)
    new, mask = warm.acting_logprobs([(request.prompt_ids, decision.action_ids, ())])
    np.testing.assert_allclose(new[0][mask[0]].numpy(), expected, atol=1e-5)


def test_temperature_flattens_the_choice(policy: Policy) -> None:
    hot = Policy(policy.model, policy.tokenizer, temperature=4.0)
    turn = turns_of("tic-tac-toe", 1)[0]
    (cold_choice,) = policy.decide([request_for(policy, turn, (0,))[0]])
    (hot_choice,) = hot.decide([request_for(hot, turn, (0,))[0]])
    assert hot_choice.entropy > cold_choice.entropy
    with pytest.raises(ValueError, match="temperature must be > 0"):
        Policy(policy.model, policy.tokenizer, temperature=0)


def test_batched_and_unbatched_scores_agree(policy: Policy) -> None:
    """Across games (no shared prefix, much padding) and within one (the rules run once as
    a shared prefix), a batch gives each row what it gets alone and in a plain pass."""
    plays = [("tic-tac-toe", 4, 0), ("kuhn-poker", 2, 3), ("iterated-prisoners-dilemma", 6, 1), ("connect-four", 2, 2)]
    by_game: dict[str, list[Row]] = {}
    for game, count, seed in plays:
        for turn in turns_of(game, count, seed):
            prompt = request_for(policy, turn, (0,))[0].prompt_ids
            by_game.setdefault(game, []).extend((prompt, policy.action_ids(a)) for a in turn.legal_actions or ())
    rows = [row for game_rows in by_game.values() for row in game_rows]
    assert len({len(prompt) for prompt, _ in rows}) >= 6, "the batch must mix prompt lengths, so that padding matters"
    assert len({len(reply) for _, reply in rows}) >= 2, "and reply lengths"
    alone = [policy.score([row])[0] for row in rows]
    mixed = policy.score(rows)
    per_game = [scores for game_rows in by_game.values() for scores in policy.score(game_rows)]
    for i, (prompt, reply) in enumerate(rows):
        assert len(mixed[i]) == len(per_game[i]) == len(reply)
        np.testing.assert_allclose(mixed[i], alone[i], atol=1e-5)
        np.testing.assert_allclose(per_game[i], alone[i], atol=1e-5)
        if i % 5 == 0:
            np.testing.assert_allclose(alone[i], plain_logprobs(policy, prompt, reply), atol=1e-5)


def test_scoring_in_chunks_gives_the_same_scores_and_counts_passes(policy: Policy) -> None:
    turn = turns_of("tic-tac-toe", 1)[0]
    prompt = request_for(policy, turn, (0,))[0].prompt_ids
    rows = [(prompt, policy.action_ids(action)) for action in turn.legal_actions or ()]
    chunked = Policy(policy.model, policy.tokenizer, score_batch=4)
    scores = chunked.score(rows)
    assert chunked.forward_passes == 3  # nine rows, four at a time
    for got, want in zip(scores, policy.score(rows), strict=True):
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_save_and_load_round_trip_gives_identical_logprobs(policy: Policy, tmp_path: Path) -> None:
    turns = [*turns_of("kuhn-poker", 2, seed=5), *turns_of("tic-tac-toe", 2)]
    requests = [request_for(policy, turn, (7, i)) for i, turn in enumerate(turns)]
    policy.save(tmp_path / "copy")
    copy = Policy.load(tmp_path / "copy")
    again = [request_for(copy, turn, (7, i)) for i, turn in enumerate(turns)]
    assert again == requests  # the saved tokenizer and chat template give the same prompts
    assert copy.decide([r for r, _ in again]) == policy.decide([r for r, _ in requests])


def test_saved_weights_are_as_readable_as_the_rest_of_the_folder(
    policy: Policy, tmp_path: Path, tiny_model_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """transformers wrote the weights 0600 beside a 0644 config: a bot run as another user could
    not load them; and drew a "Writing model shards" bar through the trainer's progress line."""
    for folder in (policy.save(tmp_path / "copy"), tiny_model_dir):
        modes = {file.name: file.stat().st_mode & 0o777 for file in folder.iterdir()}
        assert modes["model.safetensors"] == modes["config.json"], modes
    assert "Writing model shards" not in capfd.readouterr().err


def test_sampling_is_keyed_whatever_else_is_in_the_batch(policy: Policy) -> None:
    turns = turns_of("tic-tac-toe", 5)
    target, _ = request_for(policy, turns[0], (3, 14, 0, 0, 0))
    (alone,) = policy.decide([target])
    others = [request_for(policy, turn, (3, 99, turn.step, turn.seat, 0))[0] for turn in turns[1:]]
    for batched in (policy.decide([*others, target])[-1], policy.decide([others[0], target, *others[1:]])[1]):
        # padding moves the numbers in the seventh digit, never the keyed choice
        assert (batched.action, batched.action_ids) == (alone.action, alone.action_ids)
        np.testing.assert_allclose(batched.choice_probs, alone.choice_probs, atol=1e-5)
    chosen = {policy.decide([request_for(policy, turns[0], (3, match, 0, 0, 0))[0]])[0].action for match in range(12)}
    assert len(chosen) >= 3, "different keys must be able to sample different actions"


def test_generation_is_keyed_stops_at_the_budget_and_gives_one_logprob_per_token(policy: Policy) -> None:
    turn = turns_of("item-negotiation", 1)[0]
    assert turn.legal_actions is None
    short = Policy(policy.model, policy.tokenizer, max_new_tokens=6)
    request, _ = request_for(short, turn, (1, 2, 3))
    before = short.forward_passes
    (decision,) = short.decide([request])
    assert len(decision.action_ids) == len(decision.logprobs) == 6  # a random model does not stop by itself
    assert short.forward_passes - before == 6
    assert decision.choice_probs == () and decision.entropy is None
    assert decision.reply == short.tokenizer.decode(list(decision.action_ids), skip_special_tokens=True)
    np.testing.assert_allclose(decision.logprobs, plain_logprobs(short, request.prompt_ids, decision.action_ids), atol=1e-5)
    assert short.decide([request]) == [decision]


def test_replies_generated_together_are_those_generated_alone_in_one_pass_per_token(policy: Policy) -> None:
    turns = [*turns_of("item-negotiation", 3), *turns_of("buyer-seller", 2)]
    short = Policy(policy.model, policy.tokenizer, max_new_tokens=5)
    requests = [request_for(short, turn, (7, n, turn.step, turn.seat, 0))[0] for n, turn in enumerate(turns)]
    assert all(r.legal is None for r in requests) and len({len(r.prompt_ids) for r in requests}) > 1
    alone = [short.decide([request])[0] for request in requests]
    before = short.forward_passes
    together = short.decide(requests)
    assert short.forward_passes - before == 5  # one pass per token for all five replies
    for one, batched in zip(alone, together, strict=True):
        assert (batched.action_ids, batched.reply) == (one.action_ids, one.reply)
        np.testing.assert_allclose(batched.logprobs, one.logprobs, atol=1e-5)


def test_a_legal_set_above_the_score_limit_is_generated(policy: Policy) -> None:
    turn = turns_of("tic-tac-toe", 1)[0]
    limited = Policy(policy.model, policy.tokenizer, score_limit=4, max_new_tokens=3)
    request, _ = request_for(limited, turn, (0,))
    (decision,) = limited.decide([request])
    assert decision.choice_probs == () and len(decision.action_ids) == len(decision.logprobs) <= 3


def test_a_folder_without_a_saved_model_is_refused_clearly(tmp_path: Path, tiny_model_dir: Path) -> None:
    with pytest.raises(
        FileNotFoundError, match=r"not a model folder .*\(no config.json, no weights, no tokenizer files\).*init-model"
    ):
        Policy.load(tmp_path)
    (tmp_path / "config.json").write_text("{}")  # a training run's folder: its resolved config, its checkpoints
    shutil.copytree(tiny_model_dir, tmp_path / "checkpoints" / "final")
    with pytest.raises(FileNotFoundError, match=r"\(no weights, no tokenizer files\); it looks like a training run: .*final'$"):
        Policy.load(tmp_path)


@pytest.mark.parametrize(("name", "what"), [("model.safetensors", "weights"), ("tokenizer.json", "tokenizer")])
def test_files_cut_short_are_refused_in_one_line_naming_the_folder(
    tmp_path: Path, tiny_model_dir: Path, name: str, what: str
) -> None:
    """A save or a download cut short: the weights escaped the CLI's error handling as a
    traceback, the tokenizer as a JSON error that named no file."""
    folder = shutil.copytree(tiny_model_dir, tmp_path / "model")
    (folder / name).write_bytes((folder / name).read_bytes()[:100])
    with pytest.raises(OSError, match=rf"{folder}: cannot read its {what} .*cut short"):
        Policy.load(folder)


def test_weights_that_do_not_fit_the_config_are_refused_naming_the_folder(tmp_path: Path, tiny_model_dir: Path) -> None:
    """transformers' own words named neither the folder nor the cause: "You set
    `ignore_mismatched_sizes` to `False`, thus raising an error"."""
    folder = shutil.copytree(tiny_model_dir, tmp_path / "model")
    config = json.loads((folder / "config.json").read_text())
    config["hidden_size"] *= 2
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(OSError, match=rf"{folder}: its weights do not fit its config.json"):
        Policy.load(folder)


def test_a_model_type_transformers_does_not_know_is_refused_in_one_line(tmp_path: Path, tiny_model_dir: Path) -> None:
    """transformers said it in five lines, naming no folder (found by a QA helper)."""
    folder = shutil.copytree(tiny_model_dir, tmp_path / "model")
    config = json.loads((folder / "config.json").read_text())
    config["model_type"] = "no-such-architecture"
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(OSError, match=rf"^{folder}: this transformers \(.*\) does not know the model_type its config.json"):
        Policy.load(folder)


def test_a_tokenizer_larger_than_the_models_embeddings_is_refused_as_it_loads(tmp_path: Path, tiny_model_dir: Path) -> None:
    """Another model's tokenizer loaded, and the run failed at its first rare token with
    "index out of range in self", its folder made (found by a QA helper)."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from trainer.checkpoints import save_model_folder

    config = AutoConfig.from_pretrained(tiny_model_dir)
    config.vocab_size = 1024
    folder = tmp_path / "model"
    save_model_folder(AutoModelForCausalLM.from_config(config), AutoTokenizer.from_pretrained(tiny_model_dir), folder)
    with pytest.raises(OSError, match=rf"^{folder}: its tokenizer's vocabulary has 2048 tokens and its model's embeddings 1024"):
        Policy.load(folder)


def test_a_transformers_older_than_the_one_spoken_is_refused_as_it_loads(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """transformers 5.23 loaded the model, and every reply failed inside the match ('no attribute
    cache'): each match a forfeit, and a trained checkpoint useless as a bot (found by a QA helper)."""
    import trainer.policy

    monkeypatch.setattr(trainer.policy.transformers, "__version__", "5.23.0")
    with pytest.raises(RuntimeError, match=r"need transformers 5\.24 or newer, this is 5\.23\.0: pip install --upgrade"):
        Policy.load(tiny_model_dir)
