"""The preview in a real browser: Debian's Chromium, driven by Playwright (the system browser:
nothing is downloaded), over the kitchen-sink and maths banks opened from `file://`.

Oracles outside the preview's code: the browser's own layout and console (a formula is a laid
out MathML box, an image has decoded pixels, a script error is reported), the item files read
back by the loader (languages, types, how many formulas each field holds by the maths scanner),
and axe-core, the accessibility engine, for serious or critical violations.

Without a browser (no Chromium at $DPASSESS_CHROMIUM or /usr/bin/chromium, or no Playwright)
the module skips with one line; CI (CI=true), where `.ci/run` installs Chromium, fails instead.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT
from dpassess.app.preview import preview
from dpassess.bank.load import load_bank
from dpassess.markup.fields import markdown_texts
from dpassess.markup.maths import find_maths

CHROMIUM = os.environ.get("DPASSESS_CHROMIUM", "/usr/bin/chromium")
AXE = ROOT / "tests" / "js" / "node_modules" / "axe-core" / "axe.min.js"
KS = ROOT / "tests" / "banks" / "kitchen-sink"
MATHS = ROOT / "tests" / "banks" / "maths"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _missing() -> str | None:
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install -e '.[test]')"
    if not AXE.is_file():
        return f"axe-core is not installed ({AXE}: make tests/js/node_modules/.installed)"
    return None


_why = _missing()
if _why is not None:
    if os.environ.get("CI"):
        pytest.fail(f"the browser tests cannot run in CI: {_why}", pytrace=False)
    pytest.skip(f"browser tests of the preview skipped: {_why}", allow_module_level=True)

from playwright.sync_api import Page, sync_playwright  # noqa: E402


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The preview of both banks, and of two forms of the kitchen-sink bank."""
    base = tmp_path_factory.mktemp("preview")
    bps = base / "blueprints"
    bps.mkdir()
    (bps / "ks.yaml").write_text(json.dumps({
        "schema": 1, "id": "ks", "bank": str(KS), "forms": 2, "items": {"min": 8, "max": 14},
        "statuses": ["draft", "reviewed"], "seed": 3}), encoding="utf-8")
    out = base / "site"
    preview([KS, MATHS], out, bps)
    return out


@pytest.fixture(scope="module")
def chromium():
    """The system Chromium (Playwright gives each launch a fresh profile folder)."""
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def browser(chromium):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    yield context
    context.close()


class Visit:
    """A page opened from disk, with every request it made and every error it reported."""

    def __init__(self, context, site: Path, rel: str) -> None:
        self.page: Page = context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto((site / rel).as_uri(), wait_until="load")

    def close(self) -> None:
        self.page.close()


@pytest.fixture
def visit(browser, site):
    opened: list[Visit] = []

    def _open(rel: str) -> Visit:
        v = Visit(browser, site, rel)
        opened.append(v)
        return v

    yield _open
    for v in opened:
        v.close()


def item_pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in (site / "items").rglob("*.html"))


def banks():
    return [load_bank(KS), load_bank(MATHS)]


# --- every page, opened once -----------------------------------------------------------------


@dataclass
class Seen:
    """What the tests below read of one page, opened once for all of them (each test opening
    every page again was most of this module's time)."""

    errors: list[str]
    requests: list[str]
    hrefs: list[str]
    boxes: list[list[float]]  # each `math` element's width and height, in `main`
    images: list[list]  # src, complete, naturalWidth, alt
    blocks: list[list]  # each language section: lang, left, top, text
    html_lang: str | None
    shown: str = ""  # an item's texts as shown, without its lint findings (which quote sources)


@pytest.fixture(scope="module")
def seen(browser, site) -> dict[str, Seen]:
    pages = ["index.html", *item_pages(site), "forms/ks.html", "rules/index.html",
             "rules/WR009.html"]
    out: dict[str, Seen] = {}
    for rel in pages:
        v = Visit(browser, site, rel)
        ev = v.page.eval_on_selector_all
        out[rel] = Seen(
            errors=list(v.errors), requests=list(v.requests),
            hrefs=ev("a[href]", "els => els.map(e => e.href)"),
            boxes=ev("main math", "els => els.map(e => [e.getBoundingClientRect().width, "
                     "e.getBoundingClientRect().height])"),
            images=ev("img", "els => els.map(e => [e.getAttribute('src'), e.complete, "
                      "e.naturalWidth, e.getAttribute('alt')])"),
            blocks=ev("main .langs > section",
                      "els => els.map(e => [e.lang, e.getBoundingClientRect().left, "
                      "e.getBoundingClientRect().top, e.innerText])"),
            html_lang=v.page.get_attribute("html", "lang"))
        if rel.startswith("items/"):
            v.page.add_style_tag(content=".findings { display: none }")
            out[rel].shown = v.page.inner_text("main .langs") + v.page.inner_text("h1")
        v.close()
    return out


def item_page(bank, item) -> str:
    return f"items/{bank.id}/{item.id}.html"


# --- loading --------------------------------------------------------------------------------------


def test_every_page_loads_from_disk_with_no_error_and_no_request_leaving_the_folder(seen, site):
    assert len(seen) == 4 + sum(len(b) for b in banks())
    prefix = site.as_uri() + "/"
    for rel, page in seen.items():
        assert page.errors == [], (rel, page.errors)
        outside = [u for u in page.requests if not u.startswith(prefix)]
        assert outside == [], (rel, outside)
        # every link of the page leads to a file of the site
        for href in page.hrefs:
            target = href.split("#", 1)[0]
            if target.startswith("file://"):
                assert Path(target.removeprefix("file://")).is_file(), (rel, href)


# --- maths, images, languages ---------------------------------------------------------------------


def expected_formulas(item, bank) -> int:
    n = sum(len(find_maths(text)) for c in item.text.values() for _, text in markdown_texts(c))
    if item.stimulus is not None:
        n += sum(len(find_maths(c.text)) for c in bank.stimulus(item.stimulus).text.values())
    return n


def test_every_formula_is_a_laid_out_math_element_and_no_tex_shows(seen):
    total = 0
    for bank in banks():
        for item in bank:
            page = seen[item_page(bank, item)]
            assert len(page.boxes) == expected_formulas(item, bank), item.id
            assert all(w > 0 and h > 0 for w, h in page.boxes), (item.id, page.boxes)
            assert page.shown.strip(), item.id
            for tex in ("\\(", "\\)", "\\[", "\\]", "$$"):
                assert tex not in page.shown, (item.id, tex)
            total += len(page.boxes)
    assert total > 100  # the maths bank alone has 88


def test_images_load(seen, site):
    shown = 0
    for rel in item_pages(site):
        for src, complete, width, alt in seen[rel].images:
            assert src and complete and width > 0, (rel, src)
            assert alt is not None
        shown += len(seen[rel].images)
    assert shown >= 4  # the kitchen-sink bank's images, in both languages


def test_both_languages_are_shown_side_by_side_with_their_lang(seen):
    for bank in banks():
        for item in bank:
            page = seen[item_page(bank, item)]
            blocks = page.blocks
            assert [b[0] for b in blocks] == [la for la in bank.languages if la in item.text]
            assert len({round(b[2]) for b in blocks}) == 1, "side by side: one row"
            assert blocks[0][1] < blocks[1][1]
            for lang, _, _, text in blocks:
                title = item.text[lang].title
                if title:
                    assert title in text, (item.id, lang)
            assert page.html_lang == "en"


# --- the key can be hidden, from the keyboard ---------------------------------------------------


def test_the_key_is_hidden_when_asked_with_the_keyboard(visit):
    v = visit("items/maths/m-fraction.html")
    keys = v.page.locator(".key")
    assert keys.count() >= 4  # the key mark and the feedback in each language
    assert all(keys.nth(i).is_visible() for i in range(keys.count()))
    v.page.keyboard.press("Tab")  # the skip link first
    for _ in range(10):
        v.page.keyboard.press("Tab")
        if v.page.evaluate("document.activeElement.id") == "hide-key":
            break
    assert v.page.evaluate("document.activeElement.id") == "hide-key"
    v.page.keyboard.press("Space")
    assert not any(keys.nth(i).is_visible() for i in range(keys.count()))
    # the students' part stays
    assert v.page.locator("ol.options li").first.is_visible()
    assert "Feedback" not in v.page.inner_text("main .langs")


# --- the index filters --------------------------------------------------------------------------


def shown_ids(page: Page) -> list[str]:
    return page.eval_on_selector_all(
        "#items tbody tr:not([hidden]) td:first-child a", "els => els.map(e => e.textContent)")


def test_the_index_filters_by_type_topic_finding_and_searches_any_language(visit):
    every = [(b, it) for b in banks() for it in b]
    v = visit("index.html")
    page = v.page
    assert sorted(shown_ids(page)) == sorted(it.id for _, it in every)
    page.select_option("select[name=type]", "numerical")
    assert sorted(shown_ids(page)) == sorted(it.id for _, it in every
                                              if it.type.value == "numerical")
    assert page.inner_text("#shown").startswith(f"{len(shown_ids(page))} of {len(every)}")
    page.select_option("select[name=type]", "")
    page.select_option("select[name=topic]", "maths/statistics")
    assert sorted(shown_ids(page)) == sorted(it.id for _, it in every
                                              if it.topic == "maths/statistics")
    page.select_option("select[name=topic]", "")
    page.select_option("select[name=finding]", "WR009")
    assert shown_ids(page) == ["m-sum"]  # the maths bank's one item with a lint finding
    page.select_option("select[name=finding]", "")
    # a word of an Indonesian title only
    page.fill("input[name=q]", "galat baku")
    assert shown_ids(page) == ["m-standard-error"]
    page.fill("input[name=q]", "")
    assert len(shown_ids(page)) == len(every)


def test_the_pages_read_without_javascript(chromium, site):
    context = chromium.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto((site / "index.html").as_uri())
        assert len(shown_ids(page)) == sum(len(b) for b in banks())
        assert not page.locator("#filters").is_visible()  # no controls that would do nothing
        page.goto((site / "items" / "maths" / "m-fraction.html").as_uri())
        assert page.locator("main math").first.bounding_box()["width"] > 0
        page.check("#hide-key")  # CSS alone hides the key
        assert not page.locator(".key").first.is_visible()
    finally:
        context.close()


# --- accessibility --------------------------------------------------------------------------------


@pytest.mark.parametrize("rel", ["index.html", "items/maths/m-confidence.html",
                                 "items/kitchen-sink/ks-probe-count.html",
                                 "items/kitchen-sink/ks-hash-lookup.html",
                                 "items/kitchen-sink/ks-traversal-match.html",
                                 "items/kitchen-sink/ks-cloze-hash.html",
                                 "items/kitchen-sink/ks-intro-hashing.html",
                                 "items/kitchen-sink/ks-growth-ordering.html", "forms/ks.html",
                                 "rules/WR009.html"])
def test_axe_finds_no_serious_violation(visit, site, rel):
    assert (site / rel).is_file(), rel
    v = visit(rel)
    assert v.errors == []
    v.page.add_script_tag(path=str(AXE))
    # preload off: axe would fetch the stylesheet again, which file:// pages may not do
    result = v.page.evaluate("axe.run(document, {resultTypes: ['violations'], preload: false})")
    bad = [(x["id"], x["impact"], [n["target"] for n in x["nodes"]][:3])
           for x in result["violations"] if x["impact"] in ("serious", "critical")]
    assert bad == [], bad


# --- screenshots for the documentation (DPASSESS_SCREENSHOTS=1) ----------------------------------


@pytest.mark.skipif(not os.environ.get("DPASSESS_SCREENSHOTS"), reason="writes docs/img")
def test_write_the_documentation_screenshots(visit, site):
    v = visit("items/maths/m-confidence.html")
    v.page.set_viewport_size({"width": 1100, "height": 900})
    v.page.locator("main .langs").screenshot(path=str(ROOT / "docs" / "img" /
                                                      "preview-item.png"))
    v.page.locator("main").screenshot(path=str(ROOT / "docs" / "img" / "preview-item-page.png"))
    w = visit("index.html")
    w.page.set_viewport_size({"width": 1100, "height": 900})
    w.page.select_option("select[name=finding]", "any")
    w.page.screenshot(path=str(ROOT / "docs" / "img" / "preview-index.png"))


# --- the committed preview of the bundled bank (what `make run` writes) --------------------------


def test_the_committed_preview_of_the_bundled_bank_opens_offline(browser):
    site = ROOT / "exports" / "preview"
    bank = load_bank(ROOT / "items" / "data-parallelism")
    prefix = site.as_uri() + "/"
    for rel in ["index.html", "forms/dp-quiz.html",
                *(f"items/{bank.id}/{it.id}.html" for it in bank)]:
        v = Visit(browser, site, rel)
        try:
            assert v.errors == [], (rel, v.errors)
            assert [u for u in v.requests if not u.startswith(prefix)] == [], rel
            if rel.startswith("items/"):
                langs = v.page.eval_on_selector_all("main .langs > section",
                                                    "els => els.map(e => e.lang)")
                assert langs == list(bank.languages)
        finally:
            v.close()


# --- the printed forms' HTML (student form and key) draw maths too -------------------------------


def test_the_html_forms_draw_every_formula_and_show_no_tex(browser, tmp_path):
    from dpassess.assemble import assemble_problem
    from dpassess.assemble.paper import Paper, paper_html
    from dpassess.assemble.problem import resolve
    from dpassess.model.blueprint import Blueprint

    bank = load_bank(MATHS)
    data = {"id": "mx", "bank": ".", "forms": 1, "items": len(bank),
            "statuses": ["draft", "reviewed"], "seed": 1}
    [form] = assemble_problem(resolve(Blueprint.model_validate(data), "<bp>", bank)).forms
    drawn = 0
    for lang in bank.languages:
        for key in (False, True):
            path = tmp_path / f"form-{lang}-{'key' if key else 'student'}.html"
            path.write_bytes(paper_html(Paper(form, lang, "t", key, bank)))
            v = Visit(browser, tmp_path, path.name)
            try:
                assert v.errors == [], (path.name, v.errors)
                assert [u for u in v.requests if not u.startswith(tmp_path.as_uri())] == []
                boxes = v.page.eval_on_selector_all(
                    "math", "els => els.map(e => e.getBoundingClientRect().width)")
                assert all(w > 0 for w in boxes), path.name
                shown = v.page.inner_text("body")
                for tex in ("\\(", "\\)", "\\[", "\\]", "$$", "\\frac"):
                    assert tex not in shown, (path.name, tex)
                if not key:
                    assert len(boxes) > 10, path.name
                drawn += len(boxes)
            finally:
                v.close()
    assert drawn > 20
