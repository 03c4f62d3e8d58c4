"""The language model cache (`lint/langid.py`): the restricted tables read back from the cache
classify exactly as the tables restricted from py3langid's own model; a cache that is switched
off, corrupted or unwritable changes nothing but the time taken."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpassess.lint import langid

LANGS = ("en", "id")
SAMPLES = [
    "Gradien dihitung pada setiap GPU lalu dirata-ratakan dengan all-reduce.",
    "Each GPU holds a full copy of the model and a shard of the batch.",
    "Ukuran batch global adalah 8 x 32 = 256 contoh.",
    "ZeRO stage 1", "", "123 456", "data parallel training dengan PyTorch DDP",
]


def _fresh_and_cached(monkeypatch: pytest.MonkeyPatch, folder: Path, langs=LANGS):
    """(identifier restricted from the model, identifier read from the cache it wrote)."""
    monkeypatch.setenv(langid.MODEL_CACHE_ENV, str(folder))
    fresh = langid._identifier.__wrapped__(langs)
    assert list(folder.glob("langid-*.npz")), "the first read writes the cache"
    cached = langid._read_cached_model(langid._cached_model_path(langs))
    assert cached is not None
    return fresh, cached


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory):
    with pytest.MonkeyPatch.context() as mp:
        yield _fresh_and_cached(mp, tmp_path_factory.mktemp("model"))


def test_cached_tables_equal_the_restricted_model(pair) -> None:
    (fresh, known), (cached, known2) = pair
    assert known == known2 == LANGS
    assert (fresh.nb_ptc == cached.nb_ptc).all() and fresh.nb_ptc.dtype == cached.nb_ptc.dtype
    assert (fresh.nb_pc == cached.nb_pc).all()
    assert fresh.nb_classes == cached.nb_classes
    assert fresh.tk_nextmove == cached.tk_nextmove and fresh.tk_row == cached.tk_row
    assert fresh.tk_output == cached.tk_output
    for text in SAMPLES:
        assert fresh.classify(text) == cached.classify(text)


@given(st.text(max_size=200))
def test_cached_model_classifies_the_same(pair, text: str) -> None:
    (fresh, _), (cached, _) = pair
    assert fresh.classify(text) == cached.classify(text)


def test_languages_the_model_lacks_are_cached_too(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (fresh, known), (cached, known2) = _fresh_and_cached(monkeypatch, tmp_path, ("en", "xx"))
    assert fresh is None and cached is None and known == known2 == ("en",)


def test_corrupt_cache_is_read_past_and_rewritten(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(langid.MODEL_CACHE_ENV, str(tmp_path))
    path = langid._cached_model_path(LANGS)
    path.write_bytes(b"PK\x03\x04 not a model")
    assert langid._read_cached_model(path) is None
    ident, known = langid._identifier.__wrapped__(LANGS)
    assert known == LANGS and ident.classify(SAMPLES[0])[0] == "id"
    assert langid._read_cached_model(path) is not None  # rewritten
    automaton = langid._automaton_path(path)
    automaton.write_bytes(automaton.read_bytes()[:-4])  # cut short: read past, not misread
    assert langid._read_cached_model(path) is None
    automaton.unlink()
    assert langid._read_cached_model(path) is None


def test_cache_off_or_unwritable_changes_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(langid.MODEL_CACHE_ENV, "")
    assert langid.model_cache_dir() is None and langid._cached_model_path(LANGS) is None
    ident, _ = langid._identifier.__wrapped__(LANGS)
    assert ident.classify(SAMPLES[1])[0] == "en"
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way")
    monkeypatch.setenv(langid.MODEL_CACHE_ENV, str(blocker / "cache"))
    ident, _ = langid._identifier.__wrapped__(LANGS)  # cannot write: no error, same answers
    assert ident.classify(SAMPLES[1])[0] == "en"
    assert [p.name for p in tmp_path.iterdir()] == ["a-file"]


def test_cache_file_is_keyed_on_languages_and_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(langid.MODEL_CACHE_ENV, str(tmp_path))
    assert langid._cached_model_path(LANGS) != langid._cached_model_path(("en", "fr"))
    before = langid._cached_model_path(LANGS)
    monkeypatch.setattr(langid, "_MODEL_FORMAT", langid._MODEL_FORMAT + 1)
    assert langid._cached_model_path(LANGS) != before
    # another model file (py3langid reinstalled or upgraded): another key
    import py3langid.langid as pl

    formatted = langid._cached_model_path(LANGS)
    model = tmp_path / "model.npz.xz"
    model.write_bytes((pl.MODEL_DIR / pl.MODEL_FILE).read_bytes()[:100])
    monkeypatch.setattr(pl, "MODEL_FILE", str(model))  # absolute: MODEL_DIR / it is it
    other = langid._cached_model_path(LANGS)
    assert other is not None and other != formatted
    assert other.name.startswith(langid._cache_stem(LANGS))


def test_default_folder_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(langid.MODEL_CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert langid.model_cache_dir() == tmp_path / "dpassess"


def test_files_of_an_earlier_model_are_removed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(langid.MODEL_CACHE_ENV, str(tmp_path))
    stale = tmp_path / (langid._cache_stem(LANGS) + "0123456789abcdef0123.npz")
    other = tmp_path / (langid._cache_stem(("en", "fr")) + "0123456789abcdef0123.npz")
    stale.write_bytes(b"old")
    langid._automaton_path(stale).write_bytes(b"old")
    other.write_bytes(b"other languages")
    langid._identifier.__wrapped__(LANGS)
    new = langid._cached_model_path(LANGS)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [new.name, langid._automaton_path(new).name, other.name])
