"""The opponent-aware self-play trainer, and everything that runs a language model.

The math lives in small pure modules tested on hand-computed numbers: ``advantages``
(numpy only: the estimators of docs/TRAINING.md) and ``loss`` (PPO-clip, dual clip, k3
KL). Around them: ``tiny_model`` (a model and tokenizer built offline), ``policy`` (any
``from_pretrained`` model acting in games), ``batcher`` (many matches' turns in one forward
pass), ``rollout`` (matches through the one match loop), ``update`` (the PPO step),
``opponents`` (the pool and its sampling), ``config`` and ``run`` (``arena train run``),
``checkpoints`` (what a model folder is), ``plot``, ``export`` and ``store_samples``
(the store's turns, for other trainers and for this one), and ``llm_bot`` (a model as a
registry bot). Importing the package imports neither torch nor transformers: the modules
that need them import them themselves.
"""
