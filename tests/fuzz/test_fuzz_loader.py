"""Fuzzing the bank loader: item files written from every item type (tests/strategies.py) and
then mutated as text (hostile scalars, YAML tags, aliases and merges, deep nesting, huge
numbers, control characters). Property: `load_bank` loads the bank or raises a DpassessError
(BankLoadError: each problem at its file, line and field), never another exception."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from dpassess.bank.load import load_bank
from dpassess.diagnostics import DpassessError
from fuzz.hostile import TOKENS, hostile_text, stop_when_spent
from strategies import any_items, bank_config, item_to_yaml, write_bank

YAML_TOKENS = [*TOKENS, "[" * 3000 + "]" * 3000, "{a: " * 500 + "}" * 500,
               "&x [1]\nb: *x", "<<: {a: 1}", "!!binary AAAA", "!!timestamp 2001-01-01",
               "!!float 1e999", "\t", "key: value\nkey: again"]


@st.composite
def mutated_item_files(draw: st.DrawFn) -> list[str]:
    items = draw(st.lists(any_items(), min_size=1, max_size=4, unique_by=lambda i: i.id))
    files = [item_to_yaml(it) for it in items]
    for _ in range(draw(st.integers(1, 4))):
        k = draw(st.integers(0, len(files) - 1))
        text = files[k]
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 40)))
        piece = draw(st.one_of(st.sampled_from(YAML_TOKENS), hostile_text))
        files[k] = text[:i] + piece + text[j:]
    return files


@given(mutated_item_files())
def test_loader_mutations(files: list[str]) -> None:
    stop_when_spent()
    root = Path(tempfile.mkdtemp(prefix="fuzz-bank-"))
    try:
        write_bank(root, [])
        for n, text in enumerate(files):
            (root / f"{n:03d}.yaml").write_text(text, encoding="utf-8", errors="surrogatepass")
        with contextlib.suppress(DpassessError):
            load_bank(root, jobs=1)
    finally:
        shutil.rmtree(root, ignore_errors=True)


SEED_ITEMS = sorted((Path(__file__).parent / "corpus" / "seeds").glob("*.yaml"))


def test_seed_items_load_and_export(tmp_path: Path) -> None:
    """Each seed item file (inputs a fuzzing run found or an attack used) loads or is refused,
    and what loads exports in every format or is refused: never another exception."""
    from dpassess.export import EXPORTERS, Collection

    failures = []
    for seed in SEED_ITEMS:
        root = tmp_path / seed.stem
        raw = yaml.safe_load(seed.read_text(encoding="utf-8"))
        write_bank(root, [], bank_config(langs=tuple(raw["text"])))  # the item's languages
        shutil.copy(seed, root / seed.name)
        try:
            bank = load_bank(root, jobs=1)
        except DpassessError:
            continue
        coll = Collection.from_bank(bank)
        for name in EXPORTERS:
            for lang in bank.config.languages:
                try:
                    EXPORTERS[name].export(coll, lang)
                except DpassessError:
                    pass
                except Exception as exc:
                    failures.append(f"{seed.name}: {name} {lang}: {type(exc).__name__}: {exc}")
    assert not failures, "\n".join(failures)
