"""The blueprint model: what a set of exam forms must contain (a YAML file -> pydantic model).

Imports only pydantic, the item model and the standard library. Resolving names against a bank
(unknown topics, tags, item ids) happens in `assemble.problem`, where the bank is known.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from dpassess.model.common import (
    Bloom,
    Difficulty,
    ItemId,
    ItemValueError,
    LangCode,
    Status,
    Strict,
    Tag,
    Text,
    TopicPath,
)

BLUEPRINT_SCHEMA_VERSION = 1
#: Most forms one blueprint may ask for (a guard against typos such as `forms: 2000`).
MAX_FORMS = 200

NonNegInt = Annotated[int, Field(ge=0, le=100_000)]
#: The largest seed (CP-SAT and the shuffles take any seed up to a signed 64-bit integer).
MAX_SEED = 2**63 - 1
#: The longest solver budget, in seconds.
MAX_TIME_LIMIT = 3600.0
Seed = Annotated[int, Field(ge=0, le=MAX_SEED, strict=True)]
TimeLimit = Annotated[float, Field(gt=0, le=MAX_TIME_LIMIT, allow_inf_nan=False)]


def _folder(value: str) -> str:
    """A folder path as a file system takes it: no control characters (a NUL ends a path)."""
    bad = next((c for c in value if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        raise ValueError(f"a folder path cannot hold control characters (found {bad!r})")
    return value


def check_seed(value: object) -> int:
    """`value` as a seed (an integer 0..2^63-1), or ValueError saying what is wrong; the same
    rule as a blueprint's `seed`, for callers that take a seed elsewhere."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"a seed is a whole number (got {value!r})")
    if not 0 <= value <= MAX_SEED:
        raise ValueError(f"a seed is between 0 and {MAX_SEED} (got {value})")
    return value


def check_time_limit(value: object) -> float:
    """`value` as a solver budget in seconds (finite, above 0, at most MAX_TIME_LIMIT), or
    ValueError; the same rule as a blueprint's `time_limit`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"a time limit is a number of seconds (got {value!r})")
    if not 0 < value <= MAX_TIME_LIMIT:  # also refuses nan and inf
        raise ValueError(f"a time limit is above 0 and at most {MAX_TIME_LIMIT:g} seconds "
                         f"(got {value:g})")
    return float(value)


class Range(Strict):
    """A count between `min` and `max` (inclusive); no `max` means no upper bound."""

    min: NonNegInt = 0
    max: NonNegInt | None = None

    @model_validator(mode="after")
    def _check(self) -> Range:
        if self.max is not None and self.max < self.min:
            raise ItemValueError(("max",), f"max {self.max} is below min {self.min}")
        return self

    @property
    def exact(self) -> bool:
        return self.max == self.min

    def __str__(self) -> str:
        if self.exact:
            return str(self.min)
        if self.max is None:
            return f"at least {self.min}"
        return f"{self.min}..{self.max}"


def _count(value: Any) -> Any:
    # `count: 3` is shorthand for `count: {min: 3, max: 3}`; bools are not counts.
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"a count cannot be negative (got {value})")
        return {"min": value, "max": value}
    return value


#: An exact count (`3`) or a range (`{min: 2, max: 4}`).
Count = Annotated[Range, BeforeValidator(_count, json_schema_input_type=NonNegInt | Range)]

Points = Annotated[float, Field(ge=0, le=1_000_000)]


class PointsRange(Strict):
    """Total points between `min` and `max` (inclusive)."""

    min: Points = 0
    max: Points | None = None

    @model_validator(mode="after")
    def _check(self) -> PointsRange:
        if self.max is not None and self.max < self.min:
            raise ItemValueError(("max",), f"max {self.max:g} is below min {self.min:g}")
        return self

    def __str__(self) -> str:
        if self.max == self.min:
            return f"{self.min:g}"
        return f"at least {self.min:g}" if self.max is None else f"{self.min:g}..{self.max:g}"


def _points(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"points cannot be negative (got {value:g})")
        return {"min": value, "max": value}
    return value


PointsSpec = Annotated[PointsRange, BeforeValidator(_points, json_schema_input_type=Points | PointsRange)]


class Cell(Strict):
    """Items per form that match every filter given (topic and below, difficulty, Bloom, tags)."""

    name: Annotated[str, Field(min_length=1, max_length=80)] | None = Field(
        None, description="Label in the summary (default: the filters)."
    )
    topic: TopicPath | None = Field(None, description="This topic or any topic below it.")
    difficulty: Difficulty | None = None
    bloom: Bloom | None = None
    tags: tuple[Tag, ...] = Field((), description="Items carrying every one of these tags.")
    count: Count = Field(description="Items per form: an exact number or {min, max}.")

    @model_validator(mode="after")
    def _check(self) -> Cell:
        if self.topic is None and self.difficulty is None and self.bloom is None and not self.tags:
            raise ItemValueError(
                ("count",), "a cell needs at least one filter: topic, difficulty, bloom or tags"
            )
        return self

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        parts = [self.topic or "", self.difficulty or "", self.bloom or ""]
        parts += [f"#{t}" for t in self.tags]
        return " × ".join(str(p) for p in parts if p)


class Balance(Strict):
    """Mean difficulty across forms: a hard tolerance, an objective to minimise, a target mean
    per form, or any of them together. Difficulty is each item's observed `p_value` where it
    has one, else its declared difficulty through `difficulty_scale`."""

    tolerance: Annotated[float, Field(ge=0, le=1)] | None = Field(
        None, description="Largest allowed difference between two forms' mean p (0..1)."
    )
    minimize: bool = Field(
        False, description="Make the forms' mean difficulties as close as the solver can prove."
    )
    target: Annotated[float, Field(ge=0, le=1)] | None = Field(
        None, description="Mean p every form must have, within `target_tolerance`."
    )
    target_tolerance: Annotated[float, Field(ge=0, le=1)] = Field(
        0.05, description="Largest allowed distance of a form's mean p from `target`."
    )

    @model_validator(mode="after")
    def _check(self) -> Balance:
        if self.tolerance is None and not self.minimize and self.target is None:
            raise ItemValueError(("tolerance",),
                                 "give a tolerance, minimize: true, a target, or several")
        return self


P = Annotated[float, Field(ge=0, le=1)]


class DifficultyScale(Strict):
    """Expected proportion correct (p) for items that have a difficulty but no `p_value`."""

    easy: P = 0.8
    medium: P = 0.6
    hard: P = 0.4


class Blueprint(Strict):
    """A blueprint: how many forms, what each must contain, and how to order and shuffle them.

    See docs/assemble.md for a worked example.
    """

    schema_version: Literal[1] = Field(
        1, alias="schema", description="Blueprint file format version."
    )
    id: ItemId = Field(description="Names the forms: <id>-a, <id>-b, ...")
    bank: Annotated[str, Field(min_length=1, max_length=4096), AfterValidator(_folder)] = Field(
        description="The bank folder, relative to this blueprint file."
    )
    title: dict[LangCode, Text] = Field(
        default_factory=dict, description="Exam title by language (default: the bank's title)."
    )
    forms: Annotated[int, Field(ge=1, le=MAX_FORMS)] = Field(description="Number of forms.")
    items: Count = Field(description="Items per form: an exact number or {min, max}.")
    descriptions_count: bool = Field(
        False, description="Count description items (text only, never scored) in `items`, in "
        "the cells' counts and in `max_overlap` (by default a form's count is of scored items "
        "alone, and its descriptions come on top).",
    )
    points: PointsSpec | None = Field(
        None, description="Total points per form: an exact number or {min, max}."
    )
    cells: tuple[Cell, ...] = Field((), description="Counts per form of items matching filters.")
    anchors: tuple[ItemId, ...] = Field((), description="Items on every form.")
    exclude: tuple[ItemId, ...] = Field((), description="Items never used.")
    statuses: tuple[Status, ...] = Field(
        (Status.reviewed,), min_length=1,
        description="Item statuses that may be used (any but reviewed is warned about).",
    )
    enemies: tuple[tuple[ItemId, ItemId], ...] = Field(
        (), description="Extra pairs that must not share a form (items' own `enemies` always hold)."
    )
    max_overlap: NonNegInt | None = Field(
        None, description="Most non-anchor items any two forms may share (no limit if absent)."
    )
    equal_points: bool = Field(
        True, description="Every form has the same total points (when item points differ)."
    )
    balance: Balance | None = Field(None, description="Mean difficulty balance across forms.")
    difficulty_scale: DifficultyScale = Field(
        default_factory=DifficultyScale,
        description="p used for items without p_value (easy/medium/hard).",
    )
    order: Literal["random", "topic", "fixed"] = Field(
        "random",
        description="Item order: random; grouped by topic (bank order of topics, random within); "
        "fixed (bank order).",
    )
    shuffle_options: bool = Field(
        True, description="Shuffle options per item per form (locked options stay in place)."
    )
    balance_keys: bool = Field(
        True, description="Spread each form's key positions evenly over A, B, C, ..."
    )
    seed: Seed = Field(
        0, description="All randomness comes from this seed (the CLI's --seed overrides it)."
    )
    time_limit: TimeLimit = Field(
        10.0, description="Solver budget in deterministic seconds, also a bound on wall-clock "
        "seconds (the CLI's --time-limit overrides it).",
    )
    duration_minutes: Annotated[int, Field(ge=1, le=1440, strict=True)] | None = Field(
        None, description="The time students have for the exam, in minutes, printed on each "
        "form's cover (not the solver's time_limit).",
    )
    student_number_digits: Annotated[int, Field(ge=1, le=20, strict=True)] = Field(
        10, description="How many digits the student number has: the answer sheet has a "
        "column of bubbles 0-9 for each, read by `dpassess scan`.",
    )

    @model_validator(mode="after")
    def _check(self) -> Blueprint:
        problems: list[tuple[tuple[str | int, ...], str]] = []
        if self.items.min < 1:
            problems.append((("items",), "a form needs at least one item"))
        if self.items.max is None:
            problems.append((("items",), "items per form needs a max"))
        for i, (a, b) in enumerate(self.enemies):
            if a == b:
                problems.append((("enemies", i), f"{a!r} cannot be its own enemy"))
        for i, a in enumerate(self.anchors):
            if a in self.exclude:
                problems.append((("anchors", i), f"anchor {a!r} is also excluded"))
            if a in self.anchors[:i]:
                problems.append((("anchors", i), f"anchor {a!r} is listed twice"))
        if problems:
            raise ItemValueError.many(problems)
        return self
