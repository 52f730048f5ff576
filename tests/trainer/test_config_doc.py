"""docs/TRAINING.md's "Every key" tables against the training file's dataclasses: a key added,
renamed or given another default in the code and not in the doc fails here."""

from __future__ import annotations

import dataclasses
import inspect
import tomllib
import typing
from pathlib import Path
from typing import Any

import pytest

from tests.doc_tables import doc_tables
from trainer.advantages import ESTIMATORS
from trainer.config import EstimatorSetting, TrainConfig

DOC = Path(__file__).parents[2] / "docs" / "TRAINING.md"
REQUIRED = object()


def sections() -> dict[str, type]:
    """Each table of the file (a field of TrainConfig whose type is a dataclass) and its dataclass."""
    found = {}
    for name, hint in typing.get_type_hints(TrainConfig).items():
        candidates = typing.get_args(hint) or (hint,)
        for candidate in candidates:
            if dataclasses.is_dataclass(candidate):
                found[name] = candidate
    return found


def default_of(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return REQUIRED


def cell_value(cell: str) -> Any:
    if cell == "(required)":
        return REQUIRED
    if cell in ("(none)", "(all)"):
        return None
    return tomllib.loads(f"value = {cell.strip('`')}")["value"]


def documented(rows: list[list[str]]) -> dict[str, Any]:
    return {key.strip("`"): cell_value(default) for key, default, *_ in rows}


def test_every_section_has_a_table() -> None:
    assert set(doc_tables(DOC)) == {"", *sections()}


def test_top_level_keys_and_defaults() -> None:
    fields = [f for f in dataclasses.fields(TrainConfig) if f.name not in sections()]
    assert documented(doc_tables(DOC)[""]) == {f.name: default_of(f) for f in fields}


@pytest.mark.parametrize("section", sorted(set(sections()) - {"estimator"}))
def test_section_keys_and_defaults(section: str) -> None:
    fields = dataclasses.fields(sections()[section])
    assert documented(doc_tables(DOC)[section]) == {f.name: default_of(f) for f in fields}


def test_estimator_parameters_and_defaults() -> None:
    assert sections()["estimator"] is EstimatorSetting  # its keys are the chosen estimator's parameters
    rows = doc_tables(DOC)["estimator"]
    in_doc = {(name.strip("`"), key.strip("`")): cell_value(default) for name, key, default, _ in rows}
    in_code = {
        (name, parameter.name): parameter.default
        for name, estimator in ESTIMATORS.items()
        for parameter in inspect.signature(inspect.unwrap(estimator)).parameters.values()
        if parameter.kind is parameter.KEYWORD_ONLY
    }
    assert in_doc == in_code
