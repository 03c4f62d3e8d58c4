"""A loaded item or stimulus (a pydantic model of `dpassess.model`) -> plain data (tuples of
Python's own types) and back, without validating it again.

What `dpassess.lint.incremental` keeps of each unchanged item file for `load_and_lint` (the
lint cache's `models` layer): a model is written as `(class name, fields set, *field values)`,
its enums as their values, its nested models the same way. Reading it back looks the class up
in a table of the model's own classes (never by an importable name) and sets each instance's
fields as pydantic's own unpickling does (`BaseModel.__setstate__`): no validator runs, no
class outside the table can be named, and nothing in the data is called. The data is trusted
as far as the cache file is (authenticated with the user's key, salted with dpassess's own
sources); what does not have the expected shape raises, which the cache reads as a miss.

Each class's reader and writer are made once from its field annotations: only the fields that
hold models or enums are converted, the others are taken as they are (both are faster than
pickling the models: 3,000 items read in 37 ms against pickle's 82 ms, written in 44 against 64).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from enum import Enum
from functools import cache
from typing import Annotated, Any, NamedTuple, Union

from pydantic import BaseModel

from dpassess.model import ITEM_CLASSES, Stimulus
from dpassess.model.common import _shared_fields_set

#: The layout of what `dump` writes (bumped when it changes; a stored value of another layout
#: is a miss).
VERSION = 1

_Conv = Callable[[Any], Any]

# pydantic's instance slots, set as `BaseModel.__setstate__` sets them (the models are frozen)
_new = object.__new__
_setattr = object.__setattr__


class _Spec(NamedTuple):
    """How to rebuild one model class: its field names in order, the (index, reader) of the
    fields that hold models or enums, and the shared fields-set of each bit mask."""

    cls: type[BaseModel]
    names: tuple[str, ...]
    convs: tuple[tuple[str, _Conv], ...]
    sets: dict[int, set[str]]
    #: Whether every field is a short immutable plain value (an option: its id and whether it
    #: is locked): equal instances are then one shared object, as the models are frozen.
    leaf: bool
    #: For each field, the function that makes its plain form (None: the value is plain).
    writers: tuple[_Conv | None, ...]
    #: Each field's bit in the fields-set mask.
    bits: dict[str, int]


def _model_classes() -> dict[str, type[BaseModel]]:
    """Every model class an item or stimulus can hold, by name (the names are unique)."""
    found: dict[str, type[BaseModel]] = {}
    todo: list[Any] = [*ITEM_CLASSES.values(), Stimulus]
    while todo:
        ann = todo.pop()
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            if ann.__name__ in found:
                if found[ann.__name__] is not ann:
                    raise TypeError(f"two model classes named {ann.__name__}")
                continue
            found[ann.__name__] = ann
            todo += [f.annotation for f in ann.model_fields.values()]
        else:
            todo += typing.get_args(ann)
    return found


_CLASSES: dict[str, type[BaseModel]] = {}
_SPECS: dict[str, _Spec] = {}


def _spec(name: str) -> _Spec:
    spec = _SPECS.get(name)
    if spec is None:
        if not _CLASSES:
            _CLASSES.update(_model_classes())
        cls = _CLASSES[name]  # KeyError: not a class of the table
        names = tuple(cls.model_fields)
        convs = tuple((n, c) for n, f in cls.model_fields.items()
                      if (c := _reader(f.annotation)) is not None)
        leaf = not convs and all(
            _short(f.annotation if not f.metadata else Annotated[f.annotation, *f.metadata])
            for f in cls.model_fields.values())
        writers = tuple(_writer(f.annotation) for f in cls.model_fields.values())
        spec = _SPECS[name] = _Spec(cls, names, convs, {}, leaf, writers,
                                    {n: 1 << i for i, n in enumerate(names)})
    return spec


def _short(ann: Any) -> bool:
    """Whether a value of type `ann` is a number, a bool, None or a string of at most 64
    characters (an id)."""
    if ann in (int, float, bool, type(None)):
        return True
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is typing.Annotated:
        limit = [getattr(m, "max_length", None) for m in args[1:]]
        return ((args[0] is str and any(n is not None and n <= 64 for n in limit))
                or (args[0] is not str and _short(args[0])))
    if origin is typing.Literal:
        return all(type(a) in (int, bool) or (type(a) is str and len(a) <= 64) for a in args)
    if origin in (Union, types.UnionType):
        return all(_short(a) for a in args)
    return False


#: The instances of the leaf classes read so far, by plain form (bounded).
_SHARED: dict[tuple[Any, ...], BaseModel] = {}
_SHARED_MAX = 1 << 16


def _fields_set(spec: _Spec, mask: int) -> set[str]:
    got = spec.sets.get(mask)
    if got is None:
        if not 0 <= mask < 1 << len(spec.names):
            raise ValueError("not a fields mask")
        got = spec.sets[mask] = _shared_fields_set(
            {n for i, n in enumerate(spec.names) if mask >> i & 1})
    return got


def _read_model(value: tuple[Any, ...]) -> BaseModel:
    spec = _SPECS.get(value[0]) or _spec(value[0])
    if spec.leaf:
        shared = _SHARED.get(value)
        if shared is not None:
            return shared
    d = dict(zip(spec.names, value[2:], strict=True))  # ValueError: not a model of its class
    for n, conv in spec.convs:
        d[n] = conv(d[n])
    fields_set = spec.sets.get(value[1])
    obj = _new(spec.cls)
    _setattr(obj, "__dict__", d)
    _setattr(obj, "__pydantic_fields_set__",
             fields_set if fields_set is not None else _fields_set(spec, value[1]))
    _setattr(obj, "__pydantic_extra__", None)
    _setattr(obj, "__pydantic_private__", None)
    if spec.leaf:
        if len(_SHARED) >= _SHARED_MAX:
            _SHARED.clear()
        _SHARED[value] = obj
    return obj


def _enum(cls: type[Enum]) -> _Conv:
    return cls._value2member_map_.__getitem__


def _optional(conv: _Conv) -> _Conv:
    return lambda v: None if v is None else conv(v)


def _tuple_of(conv: _Conv) -> _Conv:
    return lambda v: tuple(map(conv, v))


def _list_of(conv: _Conv) -> _Conv:
    return lambda v: list(map(conv, v))


def _dict_of(conv: _Conv) -> _Conv:
    return lambda v: {k: conv(x) for k, x in v.items()}


def _reader(ann: Any) -> _Conv | None:
    """The function that turns the plain form of a value of type `ann` back into the value, or
    None when the plain form is the value (str, numbers, tuples of them...)."""
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is typing.Annotated:
        return _reader(args[0])
    if isinstance(ann, type):
        if issubclass(ann, BaseModel):
            return _read_model
        if issubclass(ann, Enum):
            return _enum(ann)
        if ann in (str, int, float, bool, type(None)):
            return None
    if origin is typing.Literal:
        kinds = {type(a) for a in args}
        enums = [k for k in kinds if issubclass(k, Enum)]
        if not enums:
            return None
        if len(kinds) == 1:
            return _enum(enums[0])
    if origin in (Union, types.UnionType):
        others = [a for a in args if a is not type(None)]
        convs = [_reader(a) for a in others]
        if all(c is None for c in convs):
            return None
        if all(c is _read_model for c in convs):
            return _optional(_read_model) if len(others) < len(args) else _read_model
        if len(others) == 1 and convs[0] is not None:
            return _optional(convs[0])
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            inner = _reader(args[0])
            return None if inner is None else _tuple_of(inner)
        if all(_reader(a) is None for a in args):
            return None
    if origin is list:
        inner = _reader(args[0])
        return None if inner is None else _list_of(inner)
    if origin in (dict, Mapping):
        if _reader(args[0]) is not None:
            raise TypeError(f"dict keys of {ann} are not plain")
        inner = _reader(args[1])
        return None if inner is None else _dict_of(inner)
    raise TypeError(f"no plain form for a field of type {ann}")


def _write_model(value: BaseModel) -> tuple[Any, ...]:
    name = type(value).__name__
    spec = _SPECS.get(name) or _spec(name)
    if spec.cls is not type(value):
        raise TypeError(f"{type(value).__qualname__} is not a model of the table")
    bits = spec.bits
    d = value.__dict__
    return (name, sum(bits[n] for n in value.__pydantic_fields_set__),
            *[d[n] if w is None else w(d[n]) for n, w in zip(spec.names, spec.writers, strict=True)])


def _enum_value(v: Enum) -> Any:
    return v.value


def _writer(ann: Any) -> _Conv | None:
    """The function that makes the plain form of a value of type `ann` (the inverse of
    `_reader`), or None when the value is plain."""
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is typing.Annotated:
        return _writer(args[0])
    if isinstance(ann, type):
        if issubclass(ann, BaseModel):
            return _write_model
        if issubclass(ann, Enum):
            return _enum_value
        if ann in (str, int, float, bool, type(None)):
            return None
    if origin is typing.Literal:
        return _enum_value if any(isinstance(a, Enum) for a in args) else None
    if origin in (Union, types.UnionType):
        others = [a for a in args if a is not type(None)]
        convs = [_writer(a) for a in others]
        if all(c is None for c in convs):
            return None
        if all(c is _write_model for c in convs):
            return _optional(_write_model) if len(others) < len(args) else _write_model
        if len(others) == 1 and convs[0] is not None:
            return _optional(convs[0])
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            inner = _writer(args[0])
            return None if inner is None else _tuple_of(inner)
        if all(_writer(a) is None for a in args):
            return None
    if origin is list:
        inner = _writer(args[0])
        return None if inner is None else _list_of(inner)
    if origin in (dict, Mapping):
        inner = _writer(args[1])
        return None if inner is None else _dict_of(inner)
    raise TypeError(f"no plain form for a field of type {ann}")


def dump(model: BaseModel) -> tuple[Any, ...]:
    """The plain form of an item or a stimulus (TypeError for another model)."""
    if not isinstance(model, BaseModel):
        raise TypeError("not a model")
    return _write_model(model)


def load(value: object) -> BaseModel:
    """The model of `dump(model)`, equal to it (raises TypeError, ValueError, KeyError or
    IndexError when `value` is not the plain form of a model of the table)."""
    if not (isinstance(value, tuple) and len(value) >= 2 and isinstance(value[0], str)
            and isinstance(value[1], int)):
        raise TypeError("not a model")
    return _read_model(value)


@cache
def ready() -> None:
    """Make every class's reader now (otherwise on first use)."""
    for name in _model_classes():
        _spec(name)
