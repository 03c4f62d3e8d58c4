"""Media files are regular files inside the item's folder, reached without a symbolic link: a
link (out of the bank or not), a FIFO or a device is refused with a warning naming the file, and
nothing of its target reaches any export (the attack: a symlinked image carried a token from
outside the bank, or /proc/self/environ, into Moodle XML and QTI)."""

from __future__ import annotations

import base64
import io
import os
import zipfile
from pathlib import Path

import pytest

from dpassess import load_bank
from dpassess.export import Collection
from dpassess.export.moodle import gift, moodle_xml
from dpassess.export.qti import qti21
from dpassess.markup.media import locate_image, read_media
from dpassess.model import Content, Option, parse_item
from strategies import bank_config, write_bank

TOKEN = b"ghp_FAKE_TOKEN_0123456789abcdefghij"
PNG = b"\x89PNG\r\n\x1a\n a real image"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    items = tmp_path / "bank" / "items"
    (items / "img").mkdir(parents=True)
    (items / "img" / "ok.png").write_bytes(PNG)
    return items


def _item_file(folder: Path) -> str:
    return str(folder / "q.yaml")


def test_a_regular_file_is_used(folder: Path) -> None:
    found = locate_image("img/ok.png", _item_file(folder))
    assert found == ("items/img/ok.png", folder / "img" / "ok.png")
    assert read_media(found[1]) == PNG  # type: ignore[index]
    assert locate_image("img/../img/ok.png?x=1#f", _item_file(folder)) == found


@pytest.mark.parametrize("target", ["outside", "inside", "proc"])
def test_a_symbolic_link_is_refused_wherever_it_points(folder: Path, tmp_path: Path,
                                                         target: str) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_bytes(TOKEN)
    to = {"outside": secret, "inside": folder / "img" / "ok.png",
          "proc": Path("/proc/self/environ")}[target]
    (folder / "img" / "link.png").symlink_to(to)
    found = locate_image("img/link.png", _item_file(folder))
    assert isinstance(found, str) and found.startswith("is a symbolic link (")
    assert str(folder / "img" / "link.png") in found
    with pytest.raises(OSError):
        read_media(folder / "img" / "link.png")  # even if a caller skipped locate_image


def test_a_symlinked_folder_is_refused(folder: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.png").write_bytes(TOKEN)
    (folder / "pics").symlink_to(outside, target_is_directory=True)
    found = locate_image("pics/x.png", _item_file(folder))
    assert isinstance(found, str) and "symbolic link" in found and "pics" in found


def test_fifos_devices_and_folders_are_refused(folder: Path) -> None:
    os.mkfifo(folder / "img" / "pipe.png")
    found = locate_image("img/pipe.png", _item_file(folder))
    assert isinstance(found, str) and "is not a regular file" in found and "a FIFO" in found
    with pytest.raises(OSError, match="not a regular file"):
        read_media(folder / "img" / "pipe.png")  # returns at once: never blocks on the FIFO
    assert "a folder" in str(locate_image("img", _item_file(folder)))
    assert locate_image("../outside.png", _item_file(folder)) == "is outside the item's folder"
    assert str(locate_image("img/none.png", _item_file(folder))).startswith("not found at ")
    assert str(locate_image("ok.png/x.png", _item_file(folder))).startswith("not found at ")


# --- the attack, through every exporter -----------------------------------------------------------


def _bank(tmp_path: Path) -> tuple[Collection, bytes]:
    stem = "Lihat ![a](img/leak.png) dan ![b](img/env.png) dan ![c](img/ok.png)"
    item = parse_item(dict(
        id="leak", type="single_choice", topic="t/u", points=1.0,
        options=[Option(id="a"), Option(id="b")], key=["a"],
        text={"en": Content(stem=stem, options={"a": "A ![d](img/leak.png)", "b": "B"},
                            feedback={"a": "![e](img/env.png)"})}))
    bank = write_bank(tmp_path / "bank", [item], bank_config(langs=("en",)))
    secret = tmp_path / "secret.txt"
    secret.write_bytes(TOKEN)
    img = bank / "items" / "img" if (bank / "items").is_dir() else bank / "img"
    img.mkdir(parents=True, exist_ok=True)
    (img / "leak.png").symlink_to(secret)
    (img / "env.png").symlink_to("/proc/self/environ")
    (img / "ok.png").write_bytes(PNG)
    return Collection.from_bank(load_bank(bank)), Path("/proc/self/environ").read_bytes()


def _all_bytes(data: bytes) -> bytes:
    """The export's bytes, with every file of a zip package unpacked and appended."""
    if data[:2] != b"PK":
        return data
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return data + b"".join(z.read(n) for n in z.namelist())


@pytest.mark.parametrize("exporter", [moodle_xml, qti21, gift], ids=["moodle_xml", "qti21", "gift"])
def test_no_export_carries_a_linked_file(tmp_path: Path, exporter: object) -> None:
    collection, environ = _bank(tmp_path)
    result = exporter.export(collection, "en")  # type: ignore[attr-defined]
    data = _all_bytes(result.data)
    for secret in (TOKEN, environ[:64]):
        assert secret not in data
        assert base64.b64encode(secret)[:40] not in data
    messages = [w.message for w in result.warnings]
    assert any("img/leak.png" in m and ("symbolic link" in m or exporter is gift)
               for m in messages), messages
    assert any("img/env.png" in m for m in messages), messages
    if exporter is moodle_xml:
        assert base64.b64encode(PNG).decode() in data.decode()  # the regular image still goes
