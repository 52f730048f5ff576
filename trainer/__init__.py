"""The opponent-aware trainer: credit assignment, losses and opponent sampling.

The math lives in small pure modules (``trainer.advantages`` needs numpy only) so that
it is unit-tested on hand-computed numbers without torch; the parts that need a model
import torch themselves. The formulas follow TRAINING_MATH.md (the shared reference).
"""
