"""`dpassess preview` without a browser: the same banks give the same bytes wherever they are
built; what each page says is checked against the item files, the lint report, the exports'
own warnings and the recorded statistics (parsed back with lxml, an independent HTML parser);
`--serve` answers on 127.0.0.1 and writes the site again after a save."""

from __future__ import annotations

import os
import shutil
import threading
import time
import urllib.request
from datetime import date
from pathlib import Path

import lxml.html
import pytest
from typer.testing import CliRunner

from conftest import ROOT, files
from dpassess.app.preview import MANIFEST, preview, serve
from dpassess.bank.load import load_bank
from dpassess.cli import app
from dpassess.export import EXPORTERS, Collection
from dpassess.stats import analyse, read_responses
from dpassess.stats.history import write_record

KS = ROOT / "tests" / "banks" / "kitchen-sink"
MATHS = ROOT / "tests" / "banks" / "maths"
STATS = ROOT / "tests" / "fixtures" / "stats"


def page(out: Path, rel: str) -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring((out / rel).read_bytes())


def test_the_same_banks_give_byte_identical_sites_wherever_they_are(tmp_path, monkeypatch):
    one = tmp_path / "one"
    preview([KS, MATHS], one)
    # a copy of the banks elsewhere, previewed from another working folder
    copies = tmp_path / "elsewhere"
    shutil.copytree(KS, copies / "kitchen-sink")
    shutil.copytree(MATHS, copies / "maths")
    monkeypatch.chdir(copies)
    two = tmp_path / "two"
    preview([Path("kitchen-sink"), Path("maths")], two)
    a, b = files(one), files(two)
    assert a == b
    assert len(a) > 70
    assert not any(str(tmp_path).encode() in data for data in a.values())


def test_the_index_lists_every_item_with_its_metadata_and_findings(tmp_path):
    out = tmp_path / "site"
    report = preview([KS, MATHS], out)
    assert report.findings == 9  # the WR009 of m-sum in each language, and the seven LM008
    # (what the Canvas export cannot carry, its mixed cloze included) of the kitchen sink
    assert report.items == len(load_bank(KS)) + len(load_bank(MATHS))
    doc = page(out, "index.html")
    rows = doc.xpath("//table[@id='items']/tbody/tr")
    items = {it.id: it for root in (KS, MATHS) for it in load_bank(root)}
    assert sorted(r.get("data-item-id") or r.xpath("string(td[1]/a)") for r in rows) == \
        sorted(items)
    for r in rows:
        it = items[r.xpath("string(td[1]/a)")]
        assert r.get("data-type") == it.type.value and r.get("data-topic") == it.topic
        assert r.get("data-status") == it.status.value
        href = r.xpath("string(td[1]/a/@href)")
        assert (out / href).is_file()
    [m_sum] = [r for r in rows if r.xpath("string(td[1]/a)") == "m-sum"]
    assert m_sum.get("data-findings") == "WR009"
    assert m_sum.xpath("string(.//a[text()='WR009']/@href)") == "rules/WR009.html"
    rule = page(out, "rules/WR009.html")
    assert "uneven-option-length" in rule.text_content()


def test_a_finding_is_shown_at_its_field_in_its_language(tmp_path):
    out = tmp_path / "site"
    preview([MATHS], out)
    doc = page(out, "items/maths/m-sum.html")
    for lang in ("id", "en"):
        [section] = doc.xpath(f"//section[@lang='{lang}']")
        [option] = section.xpath(".//li[@data-option='gauss']")
        assert "WR009" in option.text_content()
        assert f"'{lang}'" in option.text_content()
        others = section.xpath(".//li[@data-option!='gauss']")
        assert others and not any("WR009" in o.text_content() for o in others)


def test_what_each_export_loses_is_what_the_exporters_warn(tmp_path):
    out = tmp_path / "site"
    preview([KS], out)
    bank = load_bank(KS)
    doc = page(out, "items/kitchen-sink/ks-fifo-name.html")
    shown = " ".join(doc.xpath("string(//main)").split())
    result = EXPORTERS["gift"].export(Collection.from_bank(bank), "en")
    theirs = [d for d in result.warnings if d.item == "ks-fifo-name"]
    for d in theirs:
        assert " ".join(d.message.split()) in shown
    hashing = page(out, "items/kitchen-sink/ks-hash-lookup.html")
    assert "gift" in hashing.xpath("string(//main)")


def test_the_statistics_history_is_charted_and_tabled(tmp_path):
    bank_dir = tmp_path / "bank"
    shutil.copytree(STATS / "bank", bank_dir)
    bank = load_bank(bank_dir)
    first = analyse(read_responses(STATS / "hand.csv", bank))
    write_record(first, date(2026, 1, 10))
    second_csv = tmp_path / "second.csv"
    lines = (STATS / "hand.csv").read_text(encoding="utf-8").splitlines()
    # another class (other persons: the same attempts again would be a re-download, which
    # replaces the first record instead of adding a second administration)
    second_csv.write_text("\n".join([lines[0], *("S" + line for line in lines[1:]),
                                     "P99,,q-sun,"]) + "\n", encoding="utf-8")
    second = analyse(read_responses(second_csv, bank))
    write_record(second, date(2026, 2, 10))
    out = tmp_path / "site"
    preview([bank_dir], out)
    doc = page(out, f"items/{bank.id}/q-sun.html")
    [svg] = doc.xpath("//svg")
    polylines = svg.xpath(".//polyline")
    assert len(polylines) >= 1
    assert len(polylines[0].get("points").split()) == 2  # p at both administrations
    # the chart draws each option's share too (against the analyses' own figures)
    for oid in [o.option for o in first.item("q-sun").options]:
        [line] = svg.xpath(f".//polyline[@data-series='share {oid}']")
        assert len(line.get("points").split()) == 2, oid
    label = svg.get("aria-label")
    for a in (first, second):
        for o in a.item("q-sun").options:
            assert f"{o.option} {o.share:.2f}" in label, (o.option, label)
    rows = doc.xpath("//table[caption]/tr[td]")
    assert [r.xpath("string(td[1])") for r in rows] == ["2026-01-10", "2026-02-10"]
    for r, a in zip(rows, (first, second), strict=True):
        s = a.item("q-sun")
        assert r.xpath("string(td[2])") == str(s.n)
        assert r.xpath("string(td[3])") == f"{s.p:.2f}"
    pooled = (first.item("q-sun").n * first.item("q-sun").p
              + second.item("q-sun").n * second.item("q-sun").p) / (
        first.item("q-sun").n + second.item("q-sun").n)
    assert f"p = {pooled:.2f}" in doc.text_content()


def test_a_deleted_item_loses_its_page_and_nothing_else_is_removed(tmp_path):
    bank_dir = tmp_path / "bank"
    shutil.copytree(MATHS, bank_dir)
    out = tmp_path / "site"
    (out / "items").mkdir(parents=True)
    (out / "items" / "mine.txt").write_text("the user's own file")
    preview([bank_dir], out)
    assert (out / "items" / "maths" / "m-sum.html").is_file()
    (bank_dir / "m02-sum.yaml").unlink()
    preview([bank_dir], out)
    assert not (out / "items" / "maths" / "m-sum.html").exists()
    assert (out / "items" / "mine.txt").read_text() == "the user's own file"
    assert "items/maths/m-sum.html" not in (out / MANIFEST).read_text()
    fresh = tmp_path / "fresh"
    preview([bank_dir], fresh)
    assert files(fresh) == {k: v for k, v in files(out).items() if k != "items/mine.txt"}


def test_active_content_in_item_text_is_left_out(tmp_path):
    bank_dir = tmp_path / "bank"
    shutil.copytree(MATHS, bank_dir)
    item = bank_dir / "m01-fraction.yaml"
    item.write_text(item.read_text().replace(
        "stem: ", "stem: <script>alert(1)</script><img src=x onerror=alert(2)> "
        "<a href='javascript:alert(3)'>x</a> ", 1))
    out = tmp_path / "site"
    preview([bank_dir], out)
    doc = page(out, "items/maths/m-fraction.html")
    assert doc.xpath("//script") == []
    assert [a for el in doc.iter() for a in el.attrib if a.lower().startswith("on")] == []
    assert not [h for h in doc.xpath("//@href | //@src") if "javascript" in h.lower()]
    # and lint says so at the field
    assert "LM004" in doc.xpath("string(//section[@lang='id'])")


def test_the_cli_writes_the_site_and_a_bad_bank_is_exit_2(tmp_path):
    runner = CliRunner()
    out = tmp_path / "site"
    r = runner.invoke(app, ["preview", str(MATHS), "--out", str(out), "--no-cache"])
    assert r.exit_code == 0, r.output
    assert f"wrote {out / 'index.html'}: 6 items, 2 lint findings" in r.output
    bad = tmp_path / "bad"
    shutil.copytree(MATHS, bad)
    (bad / "m01-fraction.yaml").write_text("schema: 1\nid: m-fraction\ntype: single_choice\n")
    r = runner.invoke(app, ["preview", str(bad), "--out", str(tmp_path / "x"), "--no-cache"])
    assert r.exit_code == 2
    assert "m01-fraction.yaml" in r.output
    assert not (tmp_path / "x" / "index.html").exists()


def test_serve_answers_on_loopback_and_rebuilds_after_a_save(tmp_path):
    bank_dir = tmp_path / "bank"
    shutil.copytree(MATHS, bank_dir)
    out = tmp_path / "site"
    stop = threading.Event()
    urls: list[str] = []
    builds: list[object] = []
    worker = threading.Thread(target=serve, args=([bank_dir], out), kwargs={
        "port": 0, "poll": 0.1, "stop": stop, "on_ready": urls.append,
        "on_build": builds.append}, daemon=True)
    worker.start()
    try:
        for _ in range(600):  # bounded: at most a minute
            if urls:
                break
            time.sleep(0.1)
        assert urls and urls[0].startswith("http://127.0.0.1:")
        with urllib.request.urlopen(urls[0] + "items/maths/m-sum.html", timeout=10) as resp:
            assert b"Jumlah" in resp.read()
        item = bank_dir / "m02-sum.yaml"
        item.write_text(item.read_text().replace("title: Jumlah", "title: Total jumlah", 1))
        os.utime(item, ns=(time.time_ns(), time.time_ns() + 10**9))
        for _ in range(600):
            if len(builds) >= 2:
                break
            time.sleep(0.1)
        assert len(builds) == 2
        with urllib.request.urlopen(urls[0] + "items/maths/m-sum.html", timeout=10) as resp:
            assert b"Total jumlah" in resp.read()
    finally:
        stop.set()
        worker.join(30)
    assert not worker.is_alive()


@pytest.mark.parametrize("rel", ["index.html", "items/kitchen-sink/ks-probe-count.html"])
def test_pages_need_no_network(tmp_path, rel):
    out = tmp_path / "site"
    preview([KS], out)
    doc = page(out, rel)
    for el in doc.iter():
        for name in ("src", "href"):
            value = el.get(name)
            if value and not value.startswith("#"):
                assert "://" not in value or (name == "href" and el.tag == "a"), value
                if "://" not in value:
                    assert (out / Path(rel).parent / value.split("#")[0]).resolve().is_file()


def test_a_finding_at_a_cloze_gap_option_is_shown_at_that_option_only(tmp_path):
    bank_dir = tmp_path / "bank"
    shutil.copytree(KS, bank_dir)
    item = bank_dir / "15-cloze-hash.yaml"
    item.write_text(item.read_text().replace(
        'chain: "chaining {separate}"', 'chain: "chaining <script>x</script>"', 1))
    out = tmp_path / "site"
    preview([bank_dir], out)
    doc = page(out, "items/kitchen-sink/ks-cloze-hash.html")
    [en] = doc.xpath("//section[@lang='en']")
    hits = [li for li in en.xpath(".//li[not(contains(@class, 'finding'))]")
            if "LM004" in li.text_content()]
    assert len(hits) == 1
    assert "chaining" in hits[0].text_content()
    [id_] = doc.xpath("//section[@lang='id']")
    assert "LM004" not in id_.text_content()


def test_an_item_a_format_leaves_out_says_so_on_its_page_and_in_the_index(tmp_path):
    # the oracle: the items Moodle's GIFT reader (ported) finds in the GIFT file of each language
    from test_export_moodle_oracle import read_gift

    out = tmp_path / "site"
    preview([KS], out)
    bank = load_bank(KS)
    left_out: set[str] = set()
    for lang in bank.languages:
        data = EXPORTERS["gift"].export(Collection.from_bank(bank), lang).data.decode()
        written = {q.idnumber for q in read_gift(data) if q.qtype != "category"}
        left_out |= {it.id for it in bank if it.id not in written}
    assert left_out >= {"ks-growth-ordering", "ks-cloze-hash"}
    index = page(out, "index.html")
    for item_id in sorted(left_out):
        doc = page(out, f"items/kitchen-sink/{item_id}.html")
        [losses] = doc.xpath("//h2[.='What each export loses']/following-sibling::h3[.='gift']"
                             "/following-sibling::ul[1]")
        assert "left out" in losses.text_content(), item_id
        [row] = index.xpath(f"//table[@id='items']/tbody/tr[td[1]/a[.='{item_id}']]")
        assert "gift" in row.xpath("string(td[last()])"), item_id


def test_a_description_has_no_points_and_nothing_to_hide(tmp_path):
    out = tmp_path / "site"
    preview([KS], out)
    bank = load_bank(KS)
    for item in bank:
        doc = page(out, f"items/kitchen-sink/{item.id}.html")
        [points] = doc.xpath("//dl/dt[.='Points']/following-sibling::dd[1]")
        if item.type.value == "description":
            assert points.text_content().startswith("none")
            assert doc.xpath("//*[@id='hide-key'] | //*[contains(@class, 'key')]") == []
        else:
            assert points.text_content() == f"{item.points:g}"
            assert doc.xpath("//input[@id='hide-key']") and doc.xpath("//div[@class='key']")


def test_an_item_page_heading_marks_the_language_of_its_title(tmp_path):
    out = tmp_path / "site"
    preview([MATHS], out)
    bank = load_bank(MATHS)
    first = bank.config.default_language or bank.languages[0]
    for item in bank:
        doc = page(out, f"items/maths/{item.id}.html")
        assert doc.get("lang") == "en"
        [h1] = doc.xpath("//h1")
        title = item.text[first].title
        if title:
            [span] = h1.xpath(f".//*[@lang='{first}']")
            assert span.text_content() == title
            assert " ".join(h1.text_content().split()) == f"{item.id}: {title}"


def test_a_warning_says_preview_once(tmp_path):
    bank_dir = tmp_path / "bank"
    shutil.copytree(KS, bank_dir)
    (bank_dir / "01-hash-lookup.yaml").write_text(
        (KS / "01-hash-lookup.yaml").read_text().replace("img/hash-table.png", "img/gone.png"))
    bps = tmp_path / "bps"
    bps.mkdir()
    (bps / "big.yaml").write_text(
        f'{{"schema": 1, "id": "big", "bank": "{bank_dir.as_posix()}", "forms": 1, '
        '"items": 99, "statuses": ["draft", "reviewed"], "seed": 1}', encoding="utf-8")
    report = preview([bank_dir], tmp_path / "site", bps)
    said = [str(d) for d in report.warnings if d.code == "preview"]
    assert any("gone.png" in s for s in said) and any("big.yaml" in s for s in said), said
    assert all(s.count("preview:") == 1 for s in said), said
