"""Any arena game with a fixed action space as a PettingZoo AEC environment.

PettingZoo is how multi-agent RL libraries expect to meet a game, so this adapter lets
them train on the catalog without knowing its string actions. Install it with the
``pettingzoo`` extra.

- Agents are ``player_0`` .. ``player_{N-1}``, seat ``i`` being ``player_i``.
- Actions are ``Discrete(len(action_space))`` over the config's fixed action space:
  index ``k`` is the action string ``config.action_space()[k]``.
- Observations are ``{"observation": uint8[observation_bytes], "action_mask": int8[A]}``.
  ``observation`` is the UTF-8 text of ``observe(seat)`` (what the game shows a language
  model), zero-padded; so it holds exactly what the seat may know, in every game, and
  nothing else. ``action_mask`` marks the seat's legal actions now (all zero while it
  waits). Limits: the bytes are text, not features, so a policy must read text (a
  byte-level or language model); a game-specific encoder should start from the
  structured ``observation_of(agent).data`` instead. A text longer than
  ``observation_bytes`` is cut at the end, with a warning. Games whose actions are
  free-form (negotiation, cheap talk) have no Discrete form and are refused.
- Simultaneous steps are sequentialised: each mover acts in ``to_move()`` order and the joint
  action is applied when the last one has acted, so later movers observe the state from
  before the step, never an earlier mover's choice.
- Rewards are the game's per-step rewards, credited to every seat when the step is
  applied; summed over an episode they are the game's returns. Every agent terminates
  when the game ends; nothing is ever truncated (every game ends by its rules).
- ``reset(seed=s)`` plays match seed ``s`` (the same deals for the same seed; from 0 to
  2**63 - 1, the seeds a match takes) and seeds each agent's action space with a stream of
  its own; a reset without a seed plays the seed after the previous episode's, starting
  from ``seed``.
- An action the mask rules out raises ValueError and changes nothing: a learner is told of
  its bug at once, where PettingZoo's classic environments end the game with a penalty.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

try:
    from gymnasium import spaces
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
except ModuleNotFoundError as missing:  # an optional extra: say which, as the CLI does for its own
    raise ModuleNotFoundError(
        f"the PettingZoo adapter needs {missing.name}: pip install 'selfplay-arena[pettingzoo]'", name=missing.name
    ) from None

import games
from games.api import MAX_SEED, Game, GameConfig, GameError, Observation

DEFAULT_OBSERVATION_BYTES = 8192
"""Room for the observation text: at their default lengths the longest of the built-in games
(Hanabi with five players) stays under half of it, and the tests check that no text is cut at
any player count. Longer matches tell more history: public goods with eight players and
punishment passes it from about round 20, so such a config needs a larger ``observation_bytes``."""
RENDER_MODES = ("human", "ansi")


class UnsupportedGame(GameError):
    """The game (under this config) has no fixed action space, so it has no Discrete form."""


def agent_name(seat: int) -> str:
    return f"player_{seat}"


def encode_text(text: str, size: int) -> tuple[np.ndarray, bool]:
    """The UTF-8 bytes of ``text`` in a zero-padded array of ``size``, and whether it was cut."""
    raw = text.encode("utf-8")
    array = np.zeros(size, dtype=np.uint8)
    kept = raw[:size]
    array[: len(kept)] = np.frombuffer(kept, dtype=np.uint8)
    return array, len(raw) > size


def decode_text(array: np.ndarray) -> str:
    """The text an ``observation`` array holds (the inverse of the encoding, up to the cut)."""
    return bytes(array).rstrip(b"\0").decode("utf-8", errors="replace")


class raw_env(AECEnv):
    """One arena game as an AEC environment (lower case: PettingZoo's name for the unwrapped
    environment); see the module docstring for the encoding."""

    def __init__(
        self,
        game_name: str,
        config: GameConfig | Mapping[str, Any] | None = None,
        seed: int = 0,
        render_mode: str | None = None,
        observation_bytes: int = DEFAULT_OBSERVATION_BYTES,
    ) -> None:
        super().__init__()
        self.game_class: type[Game] = games.get(game_name)
        seed = _plain_seed(seed)
        self.game: Game = self.game_class.new(config, seed)
        self.config: GameConfig = self.game.config
        space = self.config.action_space()
        if space is None:
            why = (  # a config with more actions than it lists (Colonel Blotto's max_listed) can list them
                f"too many to list (its config's max_listed; see `arena games {game_name}`)"
                if hasattr(self.config, "max_listed")
                else "free-form"
            )
            raise UnsupportedGame(
                f"{game_name} has no fixed action space under this config (its actions are {why}), so it cannot"
                " be a PettingZoo environment"
            )
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of {', '.join(RENDER_MODES)} or None, got {render_mode!r}")
        # a str or a float failed later, in other words, and True was a buffer of one byte
        whole = isinstance(observation_bytes, (int, np.integer)) and not isinstance(observation_bytes, (bool, np.bool_))
        if not whole or observation_bytes < 1:
            raise ValueError(f"observation_bytes must be an integer of at least 1, got {observation_bytes!r}")
        observation_bytes = int(observation_bytes)
        self.actions: tuple[str, ...] = space
        self._index = {action: i for i, action in enumerate(space)}
        self.render_mode = render_mode
        self.observation_bytes = observation_bytes
        self.metadata = {"name": game_name, "render_modes": list(RENDER_MODES), "is_parallelizable": False}
        self.possible_agents = [agent_name(seat) for seat in range(self.config.players)]
        self._seats = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self.action_spaces = {agent: spaces.Discrete(len(space)) for agent in self.possible_agents}
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0, 255, (observation_bytes,), dtype=np.uint8),
                    "action_mask": spaces.Box(0, 1, (len(space),), dtype=np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self._next_seed = seed
        self._warned_cut = False
        self._pending: dict[int, str] = {}

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        seed = _plain_seed(seed)
        start = self._next_seed if seed is None else seed
        self.game = self.game_class.new(self.config, start)  # a seed out of range is refused before anything changes
        if seed is not None:
            # one stream per agent: seeded alike, two agents' random choices were the same every time
            for i, space in enumerate(self.action_spaces.values()):
                space.seed(int(np.random.SeedSequence([seed, i]).generate_state(1, np.uint64)[0]))
        self._next_seed = (start + 1) % (MAX_SEED + 1)
        self._pending = {}
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = agent_name(self.game.to_move()[0])

    def observation_of(self, agent: str) -> Observation:
        """The game's own observation of ``agent`` (text and structured data)."""
        return self.game.observe(self._seats[agent])

    def action_mask(self, agent: str) -> np.ndarray:
        seat = self._seats[agent]
        mask = np.zeros(len(self.actions), dtype=np.int8)
        if seat in self.game.to_move() and seat not in self._pending:
            legal = self.game.legal_actions(seat)
            if legal is None:
                raise UnsupportedGame(
                    f"{self.game.spec.name} asked {agent} for a free-form action at step {self.game.step_count}"
                )
            for action in legal:
                index = self._index.get(action)
                if index is None:
                    raise GameError(f"{self.game.spec.name}: legal action {action!r} is not in the config's action space")
                mask[index] = 1
        return mask

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        text, cut = encode_text(self.observation_of(agent).text, self.observation_bytes)
        if cut and not self._warned_cut:
            self._warned_cut = True
            warnings.warn(
                f"{self.game.spec.name}: an observation text is longer than observation_bytes={self.observation_bytes} "
                "and was cut; make the environment with a larger observation_bytes",
                RuntimeWarning,
                stacklevel=2,
            )
        return {"observation": text, "action_mask": self.action_mask(agent)}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is to act; only a terminated agent steps with None")
        try:
            if isinstance(action, (bool, np.bool_)):  # an index, to Python: True played action 1
                raise TypeError
            index = operator.index(action)  # int() read 3.7 as action 3 and "2" as action 2
        except TypeError:
            raise ValueError(
                f"{agent} chose {action!r}: an action is an integer index into Discrete({len(self.actions)})"
            ) from None
        if not 0 <= index < len(self.actions):  # numpy would read -1 as the last action
            raise ValueError(f"{agent} chose action {index}, not in Discrete({len(self.actions)})")
        if not self.action_mask(agent)[index]:
            raise ValueError(f"{agent} chose action {index} ({self.actions[index]!r}), not legal now; use the action mask")
        seat = self._seats[agent]
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self._pending[seat] = self.actions[index]
        movers = self.game.to_move()
        waiting = [s for s in movers if s not in self._pending]
        if waiting:
            self.agent_selection = agent_name(waiting[0])
            return
        joint, self._pending = self._pending, {}
        paid = self.game.step(joint)
        if paid is not None:
            for other, reward in zip(self.possible_agents, paid, strict=True):
                self.rewards[other] = float(reward)
        self._accumulate_rewards()
        if self.game.is_over:
            self.terminations = dict.fromkeys(self.agents, True)
            self.agent_selection = self.agents[0]
        else:
            self.agent_selection = agent_name(self.game.to_move()[0])
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        if self.render_mode is None:
            warnings.warn("render() was called without a render_mode", UserWarning, stacklevel=2)
            return None
        text = self.game.public_view()["text"]
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release: the game is plain Python state."""


def _plain_seed(seed: Any) -> Any:
    """A numpy integer as a Python one: what seeds drawn with numpy are, in the RL libraries
    that make and reset environments; the game refuses anything else that is not an integer."""
    return int(seed) if isinstance(seed, np.integer) else seed


def env(
    game_name: str,
    config: GameConfig | Mapping[str, Any] | None = None,
    seed: int = 0,
    render_mode: str | None = None,
    observation_bytes: int = DEFAULT_OBSERVATION_BYTES,
) -> AECEnv:
    """The environment wrapped as PettingZoo's own games are, where calls out of order (a step
    before reset) fail with a clear message. Not in PettingZoo's AssertOutOfBoundsWrapper: its
    bare assertion named no agent, action or range (and ``python -O`` strips it), where the
    environment's own ValueError says each."""
    return wrappers.OrderEnforcingWrapper(raw_env(game_name, config, seed, render_mode, observation_bytes))
