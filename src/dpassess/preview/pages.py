"""Bank views and assembled forms -> the preview site: relative path -> bytes of every page.

Pages are built with lxml's HTML builder (item text through `dpassess.markup.htmlnodes`: maths
as MathML). Every link is relative and every asset (style, script, images) is a file of the
site, so it opens from `file://` without a network; nothing depends on the clock or on the
order of a dictionary that was not sorted, so the same banks give the same bytes.

Accessibility: each language block carries its `lang`, images keep their description as `alt`,
every control is a native link, button or form field (keyboard reachable, with a visible
focus ring), the colours pass WCAG AA contrast, and the key can be hidden without JavaScript
(a checkbox and CSS).
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, assert_never

import lxml.html
from lxml.html import HtmlElement
from lxml.html import builder as E

from dpassess.diagnostics import Diagnostic, Severity, dedupe
from dpassess.lint.docs import render_docs
from dpassess.lint.registry import RULES
from dpassess.markup.htmlnodes import html_nodes
from dpassess.markup.markdown import to_plain
from dpassess.markup.media import is_local_image, locate_image, read_media
from dpassess.markup.xmlchars import xml_safe
from dpassess.model import (
    Bank,
    ChoiceGap,
    Cloze,
    Description,
    Essay,
    GapContent,
    Item,
    Matching,
    MultipleResponse,
    MultipleResponseGap,
    Numerical,
    Ordering,
    ShortAnswer,
    SingleChoice,
    TrueFalse,
)
from dpassess.preview.gather import BankView, Loss
from dpassess.stats.history import ItemRecord, pooled

if TYPE_CHECKING:
    from dpassess.assemble import Assembly

#: Names of languages as their speakers write them (the code is shown for others).
LANGUAGE_NAMES = {"en": "English", "id": "Bahasa Indonesia", "de": "Deutsch", "fr": "Français",
                  "es": "Español", "nl": "Nederlands", "pt": "Português", "it": "Italiano"}

CSS = """\
:root { color-scheme: light; --ink: #1b1b1b; --muted: #4f4f4f; --link: #0b57a4; --line: #b8b8b8;
  --key: #0a6b2d; --keybg: #e7f5ec; }
* { box-sizing: border-box; }
body { font-family: system-ui, sans-serif; color: var(--ink); background: #fff; margin: 0;
  line-height: 1.5; }
main, header.site, nav.crumbs { max-width: 78rem; margin: 0 auto; padding: 0 1rem; }
a { color: var(--link); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible,
summary:focus-visible { outline: 3px solid var(--link); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: 0.5rem; }
.skip:focus { left: 0.5rem; }
h1 { font-size: 1.6rem; margin: 1rem 0 0.5rem; }
h2 { font-size: 1.25rem; margin: 1.2rem 0 0.4rem; }
h3 { font-size: 1.05rem; margin: 0.9rem 0 0.3rem; }
.muted { color: var(--muted); }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid var(--line); padding: 0.3rem 0.5rem; text-align: left;
  vertical-align: top; }
th { background: #f2f2f2; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 0.1rem 1rem; }
dl.meta dt { font-weight: 600; }
dl.meta dd { margin: 0; }
.langs { display: grid; grid-template-columns: repeat(auto-fit, minmax(20rem, 1fr)); gap: 1rem; }
.langs > section { border: 1px solid var(--line); border-radius: 6px; padding: 0 1rem 1rem; }
.stimulus { border-left: 4px solid var(--line); padding-left: 0.8rem; margin-bottom: 1rem; }
ol.options { list-style-type: upper-alpha; }
li.correct > .mark, .key { color: var(--key); }
.mark { font-weight: 700; }
div.key { background: var(--keybg); border-radius: 4px; padding: 0.2rem 0.8rem;
  margin-top: 0.8rem; color: var(--ink); }
.finding { border-left: 4px solid; padding: 0.1rem 0.5rem; margin: 0.3rem 0; list-style: none; }
.finding.error { border-color: #a4000f; background: #fde8ea; }
.finding.warning { border-color: #8a5300; background: #fff4d6; }
.finding.info { border-color: #174a7e; background: #e8f1fb; }
ul.findings { padding: 0; }
.sev { font-weight: 700; }
.toggle { margin: 0.8rem 0; }
body:has(#hide-key:checked) .key { display: none; }
.forms { display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: 1rem; }
form.filters { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: end;
  margin: 0.8rem 0; }
form.filters label { display: flex; flex-direction: column; font-size: 0.9rem; }
tr[hidden], form.filters[hidden] { display: none; }
span.finding { display: inline-block; margin: 0.1rem 0.2rem 0.1rem 0; padding: 0 0.3rem; }
.excerpt { max-height: 4.5em; overflow: hidden; }
.excerpt p { margin: 0; }
svg.chart { max-width: 100%; height: auto; }
code { background: #f2f2f2; padding: 0 0.2rem; }
math { font-family: "Latin Modern Math", "STIX Two Math", "Cambria Math",
  "DejaVu Math TeX Gyre", math; }
math[display="block"] { margin: 0.5rem 0; }
ol.options > li > p:first-of-type, .langs td > p:first-of-type,
.langs ul > li > p:first-of-type { display: inline; }
ol.options > li { margin-bottom: 0.4rem; }
"""

#: The index's filters: shows the rows whose data attributes match (the table reads without it).
JS = """\
(function () {
  "use strict";
  var form = document.getElementById("filters");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#items tbody tr"));
  var count = document.getElementById("shown");
  if (!form || !rows.length) { return; }
  form.hidden = false;
  function apply() {
    var want = {};
    ["type", "topic", "status", "difficulty", "finding"].forEach(function (name) {
      want[name] = form.elements[name].value;
    });
    var words = form.elements.q.value.toLowerCase().split(/\\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (row) {
      var d = row.dataset;
      var ok = (!want.type || d.type === want.type) &&
        (!want.topic || d.topic === want.topic || d.topic.indexOf(want.topic + "/") === 0) &&
        (!want.status || d.status === want.status) &&
        (!want.difficulty || d.difficulty === want.difficulty) &&
        (!want.finding || (want.finding === "any" ? d.findings !== "" :
          want.finding === "none" ? d.findings === "" :
          (" " + d.findings + " ").indexOf(" " + want.finding + " ") !== -1)) &&
        words.every(function (w) { return d.search.indexOf(w) !== -1; });
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " items shown";
  }
  form.addEventListener("input", apply);
  form.addEventListener("change", apply);
  form.addEventListener("submit", function (e) { e.preventDefault(); apply(); });
  apply();
}());
"""


@dataclass
class _Site:
    """The pages and media being written, and the warnings met on the way."""

    files: dict[str, bytes] = field(default_factory=dict)
    warnings: list[Diagnostic] = field(default_factory=list)
    #: how many images the pages met so far (a page that shows one is not kept for reuse: its
    #: bytes read a file outside the item)
    images: int = 0


#: A page or an index row as an earlier run left it: the key it was made with (the hash of
#: everything its bytes read) and the warnings making it gave.
Made = tuple[bytes, tuple[Diagnostic, ...]]


@dataclass
class PageStore:
    """What an earlier run left in the site's folder, for `render_site` to keep instead of
    making it again, and what this run keeps and makes, for the next.

    A page (an item's, a rule's, an asset) is kept when `earlier` has it under its path with
    the key it has now: the file holds those bytes still (the caller checked its stamp), so
    it is neither rendered nor written. An index row is taken from `rows` (its bytes, from the
    earlier index page) when its key is there. Nothing that shows an image is kept: its bytes
    read a file outside the item."""

    earlier: dict[str, Made] = field(default_factory=dict)
    rows: dict[bytes, tuple[bytes, tuple[Diagnostic, ...]]] = field(default_factory=dict)
    #: this run's pages (kept or made, not those that show an image) by path
    now: dict[str, Made] = field(default_factory=dict)
    #: this run's index rows by key: their offset and length in the index page, their warnings
    places: dict[bytes, tuple[int, int, tuple[Diagnostic, ...]]] = field(default_factory=dict)
    #: the pages left as they are (in the site, not in `render_site`'s files)
    kept: list[str] = field(default_factory=list)


#: One use of an item on an assembled form: the blueprint, the form's label, the position and
#: whether it is numbered.
_Use = tuple[str, str, int, bool]


def _uses(assemblies: Sequence[Assembly]) -> dict[str, list[_Use]]:
    """Each item's uses on the assembled forms, by item id, in the order the page lists them."""
    out: dict[str, list[_Use]] = {}
    for a in sorted(assemblies, key=lambda a: a.problem.blueprint.id):
        for form in a.forms:
            for fi in form.items:
                if fi.source.id == fi.item.id:
                    out.setdefault(fi.item.id, []).append(
                        (a.problem.blueprint.id, form.label, fi.position, fi.numbered))
    return out


def _model_hash(model: Any) -> bytes:
    """The hash of a model's type and content (as the export fragments key an item)."""
    return hashlib.sha256(
        f"{type(model).__qualname__}\0{model.model_dump_json()}".encode()).digest()[:16]


def _hash(value: object) -> bytes:
    return hashlib.blake2b(repr(value).encode("utf-8"), digest_size=16).digest()


class _Keys:
    """The key of each item's page and index row: the hash of everything they read (the
    item's content and source path, its stimulus's content and path, the bank's id, languages
    and settings, the item's findings, statistics history and export warnings, its uses on
    the assembled forms). An item's or a stimulus's content is the content hash of its file
    when the caller knows it (`digests`: path -> hash; the file is what the model is parsed
    from, with the bank's settings, which the key holds too), else the hash of its model. The
    rest (this module, the rules' names) is dpassess itself, in the cache's salt."""

    def __init__(self, view: BankView, uses: Mapping[str, list[_Use]],
                 digests: Mapping[str, bytes] | None) -> None:
        bank = view.bank
        self.view, self.uses, self.digests = view, uses, digests or {}
        self.bank_part = _hash((bank.id, bank.languages, bank.config))
        self.stimuli = {s.stimulus.id: s for s in bank.stimuli}

    def content(self, model: Any, path: str) -> tuple[str, bytes]:
        known = self.digests.get(path)
        return ("file", known) if known is not None else ("model", _model_hash(model))

    def __call__(self, item: Item, path: str) -> bytes:
        view, item_id = self.view, item.id
        known = self.digests.get(path)
        h = hashlib.blake2b(self.bank_part, digest_size=16)
        h.update(b"\0file\0" + known if known is not None else b"\0model\0" + _model_hash(item))
        h.update(b"\0" + path.encode("utf-8", "surrogateescape"))
        findings, history = view.findings.get(item_id), view.history.get(item_id)
        losses, uses = view.losses.get(item_id), self.uses.get(item_id)
        if item.stimulus is not None or findings or history or losses or uses:
            stimulus = None
            if item.stimulus is not None:
                st = self.stimuli.get(item.stimulus)
                stimulus = None if st is None else (st.path, self.content(st.stimulus, st.path))
            h.update(b"\0" + repr((item.stimulus, stimulus, findings or [], history or [],
                                    losses or [], uses or [])).encode("utf-8"))
        return h.digest()


def render_site(views: Sequence[BankView], assemblies: Sequence[Assembly] = (),
                store: PageStore | None = None, *, digests: Mapping[str, bytes] | None = None
                ) -> tuple[dict[str, bytes], list[Diagnostic]]:
    """The files of the site (relative POSIX path -> bytes) for the banks' views and the
    assembled forms, and the warnings (maths left as TeX, images that cannot be shown): every
    file, but with `store` those it keeps (`store.kept`: their files hold their bytes
    already), and an index row whose key is in `store.rows` is taken from there (the same
    bytes and warnings as rendering it again); `store.now` and `store.places` get this run's
    pages and rows. `digests`: the content hash of the banks' files by path, when known (see
    `_Keys`)."""
    site = _Site()
    _static(site, store, "assets/site.css", lambda: CSS.encode())
    _static(site, store, "assets/site.js", lambda: JS.encode())
    for name, text in render_docs().items():
        code = name.removesuffix(".md")
        _static(site, store, f"rules/{'index' if code == 'README' else code}.html",
                lambda code=code, text=text: _rule_page(code, text), text)
    ordered = sorted(views, key=lambda v: v.bank.id)
    uses = _uses(assemblies)
    keys: list[list[bytes]] = []
    for view in ordered:
        key_of = _Keys(view, uses, digests)
        bank_keys: list[bytes] = []
        keys.append(bank_keys)
        for entry in view.bank.entries:
            item = entry.item
            path = item_path(view.bank, item.id)
            if store is None:
                site.files[path] = _item_page(site, view, item, path, uses.get(item.id, []))
                continue
            key = key_of(item, entry.path)
            bank_keys.append(key)
            page = store.earlier.get(path)
            if page is not None and page[0] == key:
                site.warnings += page[1]
                store.kept.append(path)
                store.now[path] = page
                continue
            mark, images = len(site.warnings), site.images
            site.files[path] = _item_page(site, view, item, path, uses.get(item.id, []))
            if site.images == images:
                store.now[path] = (key, tuple(site.warnings[mark:]))
    for a in sorted(assemblies, key=lambda a: a.problem.blueprint.id):
        path = f"forms/{a.problem.blueprint.id}.html"
        site.files[path] = _forms_page(a, path, ordered)
    site.files["index.html"] = _index_page(site, ordered, assemblies, store, keys)
    return dict(sorted(site.files.items())), dedupe(site.warnings)


def _static(site: _Site, store: PageStore | None, path: str, make: Any,
            source: str = "") -> None:
    """A page that reads nothing of the banks (an asset, a rule's page; `source`: what it is
    made from besides dpassess): kept when the store has it with the same key, else made."""
    if store is None:
        site.files[path] = make()
        return
    key = _hash(("static", path, source))
    page = store.earlier.get(path)
    if page is not None and page[0] == key:
        store.kept.append(path)
    else:
        site.files[path] = make()
    store.now[path] = (key, ())


def item_path(bank: Bank, item_id: str) -> str:
    return f"items/{bank.id}/{item_id}.html"


def _rel(here: str, target: str) -> str:
    """The link from the page `here` to `target` (both relative to the site's root)."""
    return posixpath.relpath(target, posixpath.dirname(here) or ".")


def _text(value: str) -> str:
    return xml_safe(value)[0]


def _page(title: str, here: str, body: list[Any], lang: str = "en",
          script: bool = False) -> bytes:
    head: list[Any] = [E.META(charset="utf-8"),
                       E.META(name="viewport", content="width=device-width, initial-scale=1"),
                       E.TITLE(_text(title)),
                       E.LINK(rel="stylesheet", href=_rel(here, "assets/site.css"))]
    tail = [E.SCRIPT(src=_rel(here, "assets/site.js"))] if script else []
    doc = E.HTML(E.HEAD(*head),
                 E.BODY(E.A("Skip to the content", E.CLASS("skip"), href="#content"),
                        *body, *tail),
                 lang=lang)
    data: bytes = lxml.html.tostring(doc, doctype="<!DOCTYPE html>", encoding="utf-8",
                                     pretty_print=True)
    return data


def _crumbs(here: str, *extra: Any) -> HtmlElement:
    return E.NAV(E.A("All items", href=_rel(here, "index.html")), *extra, E.CLASS("crumbs"),
                 **{"aria-label": "Breadcrumb"})


# --- rule pages ---------------------------------------------------------------------------------


def _rule_page(code: str, markdown: str) -> bytes:
    here = f"rules/{'index' if code == 'README' else code}.html"
    nodes, _ = html_nodes(markdown.split("\n", 1)[1] if markdown.startswith("<!--") else markdown)
    wrapper = E.DIV(*nodes)
    for a in wrapper.iter("a"):
        href = a.get("href", "")
        target = href.removesuffix(".md")
        if href.endswith(".md") and (target in RULES or target == "README"):
            a.set("href", f"{'index' if target == 'README' else target}.html")
        elif not href.startswith(("http://", "https://", "#")):
            del a.attrib["href"]  # a page of the documentation that is not in the site
    title = "Lint rules" if code == "README" else f"{code} {RULES[code].name}"
    return _page(title, here, [_crumbs(here), E.MAIN(*wrapper, id="content")])


# --- item text --------------------------------------------------------------------------------


def _md(site: _Site, here: str, view: BankView, item_id: str, source: str, fld: str,
        *, path: str | None = None) -> list[Any]:
    """Markdown as nodes for the page `here`: maths as MathML, images copied into the site."""
    nodes, problems = html_nodes(source)
    where = path if path is not None else view.bank.path_of(item_id)
    site.warnings += [Diagnostic(where, 0, 0, fld, p, code="preview",
                                 severity=Severity.warning, item=item_id) for p in problems]
    for node in nodes:
        if isinstance(node, HtmlElement):
            for img in node.iter("img"):
                _image(site, here, img, where, item_id, fld)
    return nodes


def _image(site: _Site, here: str, img: HtmlElement, source: str, item_id: str, fld: str
           ) -> None:
    site.images += 1
    src = img.get("src", "")
    if img.get("alt") is None:
        img.set("alt", "")
    why = "is not a file in the bank (the preview shows no remote images)"
    if is_local_image(src):
        found = locate_image(src, source)
        if isinstance(found, str):
            why = found
        else:
            try:
                data = read_media(found[1])
            except OSError as exc:
                why = str(exc)
            else:
                suffix = posixpath.splitext(found[0])[1].lower()
                name = f"media/{hashlib.sha256(data).hexdigest()[:20]}{suffix}"
                site.files[name] = data
                img.set("src", _rel(here, name))
                return
    site.warnings.append(Diagnostic(source, 0, 0, fld, f"image {src!r} {why}",
                                    code="preview", severity=Severity.warning, item=item_id))
    del img.attrib["src"]


# --- findings ---------------------------------------------------------------------------------


def _finding(d: Diagnostic, here: str, *, show_field: bool = True) -> HtmlElement:
    code: Any = d.code
    if d.code in RULES:
        code = E.A(d.code, href=_rel(here, f"rules/{d.code}.html"),
                   title=RULES[d.code].name)
    parts: list[Any] = [E.SPAN(d.severity.value, E.CLASS("sev")), " ", code]
    if show_field and d.field:
        parts += [" at ", E.CODE(d.field)]
    parts += [": ", _text(d.message)]
    if d.help:
        parts += [E.BR(), E.SPAN(_text(d.help), E.CLASS("muted"))]
    return E.LI(*parts, E.CLASS(f"finding {d.severity.value}"))


def _findings_at(findings: Sequence[Diagnostic], fld: str, here: str) -> list[Any]:
    hits = [d for d in findings if d.field == fld or d.field.startswith(fld + ".")]
    if not hits:
        return []
    return [E.UL(*(_finding(d, here, show_field=d.field != fld) for d in hits),
                 E.CLASS("findings"))]


# --- the item page ----------------------------------------------------------------------------


def _difficulty(item: Item) -> str:
    parts = [item.difficulty.value if item.difficulty else "not declared"]
    if item.p_value is not None:
        parts.append(f"p = {item.p_value:.2f}")
    return ", ".join(parts)


def _observed(records: Sequence[ItemRecord]) -> str:
    if not records:
        return "no administration recorded"
    o = pooled(list(records))
    d = "" if o.d is None else f", D = {o.d:.2f}"
    times = "administration" if o.administrations == 1 else "administrations"
    return f"p = {o.p:.2f}{d} (n = {o.n}, {o.administrations} {times}, last {o.last})"


def _item_title(item: Item, lang: str) -> str:
    """The authored title (plain text), or "" (a derived one would show maths as TeX)."""
    content = item.text.get(lang) or next(iter(item.text.values()))
    return content.title or ""


def _stem_excerpt(item: Item, lang: str) -> list[Any]:
    """The authored title, else the stem rendered (maths as MathML, images as their alt)."""
    lang = lang if lang in item.text else next(iter(item.text))
    title = _item_title(item, lang)
    if title:
        return [E.SPAN(_text(title), lang=lang)]
    nodes, _ = html_nodes(item.text[lang].stem)
    for node in nodes:
        if isinstance(node, HtmlElement):
            for img in list(node.iter("img")):
                alt = img.get("alt") or "image"
                span = E.SPAN(f"[{alt}]")
                span.tail = img.tail
                img.getparent().replace(img, span)
    return [E.DIV(*nodes, E.CLASS("excerpt"), lang=lang)]


def _item_page(site: _Site, view: BankView, item: Item, here: str,
               uses: Sequence[_Use]) -> bytes:
    bank = view.bank
    findings = view.findings.get(item.id, [])
    first = bank.config.default_language or bank.languages[0]
    title = f"{item.id}: {_item_title(item, first)}" if _item_title(item, first) else item.id
    title_lang = first if first in item.text else next(iter(item.text))
    records = view.history.get(item.id, [])
    meta = [("Bank", bank.id), ("Type", item.type.value), ("Topic", item.topic),
            ("Status", item.status.value), ("Difficulty (declared)", _difficulty(item)),
            ("Difficulty (observed)", _observed(records)),
            ("Points", f"{item.points:g}" if item.scored else "none (text only, never scored)")]
    if item.tags:
        meta.append(("Tags", ", ".join(item.tags)))
    if item.stimulus:
        meta.append(("Stimulus", item.stimulus))
    dl = E.DL(*(x for k, v in meta for x in (E.DT(k), E.DD(_text(v)))), E.CLASS("meta"))
    langs = [la for la in bank.languages if la in item.text]
    langs += sorted(la for la in item.text if la not in langs)
    blocks = [_language_block(site, view, item, la, here, findings) for la in langs]
    body: list[Any] = [
        _crumbs(here, " · ", E.SPAN(bank.id)),
        E.MAIN(
            E.H1(item.id, *([": ", E.SPAN(_text(_item_title(item, first)), lang=title_lang)]
                            if _item_title(item, first) else [])),
            dl,
            E.H2("Lint findings"),
            E.UL(*(_finding(d, here) for d in findings), E.CLASS("findings")) if findings
            else E.P("No lint findings.", E.CLASS("muted")),
            *([E.DIV(E.INPUT(type="checkbox", id="hide-key"),
                     E.LABEL(" Hide the key, the feedback and the explanation",
                             **{"for": "hide-key"}), E.CLASS("toggle"))]
              if any(b.find_class("key") for b in blocks) else []),
            E.H2("As the students see it"),
            E.DIV(*blocks, E.CLASS("langs")),
            *_stats_section(item, records),
            *_losses_section(view.losses.get(item.id, []), here),
            *_forms_using(uses, here),
            id="content",
        ),
    ]
    return _page(title, here, body)


def _stem_of(item: Item, lang: str) -> str:
    """The stem as the printed forms show it (a cloze item's gaps as numbered blanks)."""
    if not isinstance(item, Cloze):
        return item.text[lang].stem
    from dpassess.assemble.paper import stem_of  # the printed forms' module: only when needed

    return stem_of(item, lang)


def _language_block(site: _Site, view: BankView, item: Item, lang: str, here: str,
                    findings: Sequence[Diagnostic]) -> HtmlElement:
    from dpassess.assemble.forms import FormItem, letter
    from dpassess.assemble.keys import answer

    bank = view.bank
    content = item.text[lang]
    base = f"text.{lang}"

    def md(source: str, fld: str) -> list[Any]:
        return [*_md(site, here, view, item.id, source, fld), *_findings_at(findings, fld, here)]

    name = LANGUAGE_NAMES.get(lang, lang)
    parts: list[Any] = [E.H3(f"{name} ({lang})", id=f"lang-{lang}")]
    if content.title:
        parts.append(E.P(E.STRONG(_text(content.title))))
    if item.stimulus is not None:
        st_entry = next((s for s in bank.stimuli if s.stimulus.id == item.stimulus), None)
        st = st_entry.stimulus.text.get(lang) if st_entry is not None else None
        if st_entry is not None and st is not None:
            parts.append(E.DIV(*([E.P(E.STRONG(_text(st.title)))] if st.title else []),
                               *_md(site, here, view, item.id, st.text, "text",
                                    path=st_entry.path),
                               E.CLASS("stimulus")))
    parts.append(E.DIV(*md(_stem_of(item, lang), f"{base}.stem"), E.CLASS("stem")))
    key: list[Any] = []
    fi = FormItem(0, item, item)
    match item:
        case SingleChoice() | MultipleResponse() | TrueFalse():
            c = item.text[lang]
            rows = []
            for n, oid in enumerate(item.option_ids):
                correct = oid in item.key
                mark = [E.SPAN("✓ key ", E.CLASS("mark key"))] if correct else []
                rows.append(E.LI(*mark, *md(item.option_text(lang, oid), f"{base}.options.{oid}"),
                                 *([E.CLASS("correct")] if correct else []),
                                 **{"data-option": oid}))
                fb = c.feedback.get(oid)
                if fb:
                    key.append(E.DIV(E.P(E.STRONG(f"Feedback on {letter(n)}")),
                                     *md(fb, f"{base}.feedback.{oid}")))
            parts.append(E.OL(*rows, E.CLASS("options")))
            key.insert(0, E.P(E.STRONG("Key: "), ", ".join(
                letter(item.option_ids.index(k)) for k in item.key)))
        case Numerical() | ShortAnswer():
            parts.append(E.P(E.EM("Answer: ______")))
            key.append(E.P(E.STRONG("Accepted answers: "), _text(answer(fi, [lang]).words[lang])))
            for aid, fb in item.text[lang].feedback.items():
                key.append(E.DIV(E.P(E.STRONG(f"Feedback on {aid}")),
                                 *md(fb, f"{base}.feedback.{aid}")))
        case Matching():
            mc = item.text[lang]
            responses = sorted([*item.pairs, *item.distractors])
            table = [E.TR(E.TH("Premise"), E.TH("Responses"))]
            for n in range(max(len(item.pairs), len(responses))):
                left = (md(mc.premises[item.pairs[n]], f"{base}.premises.{item.pairs[n]}")
                        if n < len(item.pairs) else [])
                right = ([f"{letter(n)}. ", *md(mc.responses[responses[n]],
                                                f"{base}.responses.{responses[n]}")]
                         if n < len(responses) else [])
                table.append(E.TR(E.TD(*([f"{n + 1}. ", *left] if left else [])), E.TD(*right)))
            parts.append(E.TABLE(*table))
            key.append(E.P(E.STRONG("Key: "), ", ".join(
                f"{n + 1} → {letter(responses.index(pid))}" for n, pid in enumerate(item.pairs))))
        case Ordering():
            oc = item.text[lang]
            shown = sorted(item.options)
            parts.append(E.UL(*(E.LI(f"{letter(n)}. ", *md(oc.options[oid], f"{base}.options.{oid}"))
                                for n, oid in enumerate(shown))))
            key.append(E.P(E.STRONG("Right order: "), ", ".join(
                letter(shown.index(oid)) for oid in item.options)))
        case Essay():
            ec = item.text[lang]
            limits = " – ".join(str(x) for x in (item.min_words, item.max_words) if x)
            parts.append(E.P(E.EM(f"Essay ({item.response_format}, {item.lines} lines"
                                  f"{', words ' + limits if limits else ''})")))
            if ec.response_template:
                parts.append(E.DIV(*md(ec.response_template, f"{base}.response_template")))
            if ec.grader_info:
                key.append(E.DIV(E.P(E.STRONG("For the grader")),
                                 *md(ec.grader_info, f"{base}.grader_info")))
        case Cloze():
            for n, gap in enumerate(item.gaps, 1):
                if isinstance(gap, ChoiceGap | MultipleResponseGap):
                    gc = item.text[lang].gaps.get(gap.id, GapContent())
                    parts.append(E.DIV(E.STRONG(f"({n})"), E.OL(
                        *(E.LI(*md(gc.options.get(oid, ""), f"{base}.gaps.{gap.id}.options.{oid}"),
                               **{"data-option": oid}) for oid in gap.options),
                        E.CLASS("options")), **{"data-gap": gap.id}))
            key.append(E.P(E.STRONG("Key: "), _text(answer(fi, [lang]).words[lang])))
            for gid, gc in item.text[lang].gaps.items():
                for fid, fb in gc.feedback.items():
                    key.append(E.DIV(E.P(E.STRONG(f"Feedback on {gid}: {fid}")),
                                     *md(fb, f"{base}.gaps.{gid}.feedback.{fid}")))
        case Description():
            pass
        case _:
            assert_never(item)
    if content.explanation:
        key.append(E.DIV(E.P(E.STRONG("Explanation")),
                         *md(content.explanation, f"{base}.explanation")))
    if key:
        parts.append(E.DIV(*key, E.CLASS("key")))
    return E.SECTION(*parts, lang=lang, **{"aria-labelledby": f"lang-{lang}"})


# --- statistics history -------------------------------------------------------------------------


def _stats_section(item: Item, records: Sequence[ItemRecord]) -> list[Any]:
    if not records:
        return [E.H2("Statistics"), E.P("No administration of this item is recorded yet (",
                                         E.CODE("dpassess stats --write"), ").",
                                         E.CLASS("muted"))]
    options = sorted({o for r in records for o in r.options})
    head = E.TR(E.TH("Administration"), E.TH("n"), E.TH("p"), E.TH("D"),
                *(E.TH(f"share {o}") for o in options))
    rows = [E.TR(E.TD(r.date), E.TD(str(r.n)), E.TD(f"{r.p:.2f}"),
                 E.TD("–" if r.d is None else f"{r.d:.2f}"),
                 *(E.TD("–" if o not in r.options else f"{r.options[o]:.2f}") for o in options))
            for r in records]
    return [E.H2("Statistics"), _chart(records),
            E.TABLE(E.CAPTION("Each recorded administration"), head, *rows)]


def _chart(records: Sequence[ItemRecord]) -> HtmlElement:
    """p and D per administration as lines (y from -0.5 to 1), and each option's share as a
    thinner dashed line, each labelled at its right end, in inline SVG."""
    w, h, pad, left, right = 440, 160, 28, 36, 96
    n = len(records)

    def x(i: int) -> float:
        return left + (w - left - right) * (i / (n - 1) if n > 1 else 0.5)

    def y(v: float) -> float:
        return pad / 2 + (h - pad) * (1 - (max(-0.5, min(1.0, v)) + 0.5) / 1.5)

    parts: list[Any] = []
    for v in (0.0, 0.5, 1.0):
        parts.append(E.E.line(x1=str(left), x2=str(w - right), y1=f"{y(v):.1f}",
                              y2=f"{y(v):.1f}", stroke="#b8b8b8"))
        parts.append(E.E.text(f"{v:g}", x="2", y=f"{y(v) + 4:.1f}", fill="#4f4f4f",
                              **{"font-size": "11"}))
    #: the label at each line's right end: (y, text, its attributes)
    ends: list[tuple[float, str, dict[str, str]]] = []
    for name, colour, values in (
        ("p", "#0b57a4", [r.p for r in records]),
        ("D", "#8a5300", [r.d for r in records]),
    ):
        pts = [(x(i), y(v)) for i, v in enumerate(values) if v is not None]
        if not pts:
            continue
        parts.append(E.E.polyline(points=" ".join(f"{a:.1f},{b:.1f}" for a, b in pts),
                                  fill="none", stroke=colour,
                                  **{"stroke-width": "2", "data-series": name}))
        for a, b in pts:
            parts.append(E.E.circle(cx=f"{a:.1f}", cy=f"{b:.1f}", r="3", fill=colour))
        ends.append((pts[-1][1], name, {"fill": colour, "font-size": "12",
                                        "font-weight": "bold"}))
    options = sorted({o for r in records for o in r.options})
    for k, oid in enumerate(options):
        pts = [(x(i), y(r.options[oid])) for i, r in enumerate(records) if oid in r.options]
        parts.append(E.E.polyline(points=" ".join(f"{a:.1f},{b:.1f}" for a, b in pts),
                                  fill="none", stroke="#4f4f4f",
                                  **{"stroke-width": "1", "data-series": f"share {oid}",
                                     "stroke-dasharray": ("5 3", "2 2", "8 3 2 3")[k % 3]}))
        ends.append((pts[-1][1], f"share {oid}", {"fill": "#4f4f4f", "font-size": "10"}))
    below = 0.0
    for b, text, attrs in sorted(ends, key=lambda e: e[0]):
        below = max(b + 4, below + 12)  # labels one under another, never on each other
        parts.append(E.E.text(text, x=str(w - right + 8), y=f"{below:.1f}", **attrs))
    for i, r in enumerate(records):
        parts.append(E.E.text(r.date, x=f"{x(i):.1f}", y=str(h - 2), fill="#4f4f4f",
                              **{"font-size": "10", "text-anchor": "middle"}))
    label = "p, D and option shares by administration: " + "; ".join(
        f"{r.date} p {r.p:.2f}" + ("" if r.d is None else f" D {r.d:.2f}")
        + "".join(f", {o} {r.options[o]:.2f}" for o in options if o in r.options)
        for r in records)
    return E.E.svg(E.E.title(label), *parts, width=str(w), height=str(h + 8 * len(options)),
                   viewBox=f"0 0 {w} {h + 8 * len(options)}", role="img",
                   **{"aria-label": label, "class": "chart"})


# --- what the exports lose ---------------------------------------------------------------------


def _losses_section(losses: Sequence[Loss], here: str) -> list[Any]:
    out: list[Any] = [E.H2("What each export loses")]
    if not losses:
        return [*out, E.P("Every format carries this item as written.", E.CLASS("muted"))]
    by_format: dict[str, dict[tuple[str, str], list[str]]] = {}
    for loss in losses:
        d = loss.diagnostic
        by_format.setdefault(loss.fmt, {}).setdefault((d.field, d.message), []).append(loss.lang)
    for fmt in sorted(by_format):
        rows = [E.LI(*([E.CODE(fld), ": "] if fld else []), _text(msg),
                     *([E.SPAN(f" ({', '.join(dict.fromkeys(langs))})", E.CLASS("muted"))]
                       if any(langs) else []))
                for (fld, msg), langs in sorted(by_format[fmt].items())]
        out += [E.H3(fmt), E.UL(*rows)]
    return out


def _forms_using(uses: Sequence[_Use], here: str) -> list[Any]:
    rows = [E.LI(E.A(f"form {label} of {bp}", href=_rel(here, f"forms/{bp}.html")),
                 f", position {position}" if numbered else "")
            for bp, label, position, numbered in uses]
    return [E.H2("On assembled forms"), E.UL(*rows)] if rows else []


# --- forms ------------------------------------------------------------------------------------


def _forms_page(a: Assembly, here: str, views: Sequence[BankView]) -> bytes:
    from dpassess.assemble.keys import answer
    from dpassess.assemble.output import summary_data

    pr = a.problem
    data = summary_data(pr, a.selection, a.forms, a.seed)
    lang = pr.bank.config.default_language or pr.bank.languages[0]
    forms = data["forms"]
    rows: list[Any] = [E.TR(E.TH(""), *(E.TH(f"Form {f['label']}") for f in forms))]

    def row(name: str, values: Iterable[str]) -> None:
        rows.append(E.TR(E.TH(name), *(E.TD(v) for v in values)))

    def p3(v: float | None) -> str:
        return "–" if v is None else f"{v:.3f}"

    row("items", (str(f["count"]) for f in forms))
    row("points", (f"{f['points']:g}" for f in forms))
    for label in data["asked"]["cells"]:
        row(f"cell: {label}", (str(f["cells"][label]) for f in forms))
    row("mean p (balanced)", (p3(f["mean_p"]) for f in forms))
    row("mean p declared", (p3(f["mean_p_declared"]) for f in forms))
    row("mean p observed", (p3(f["mean_p_observed"]) for f in forms))
    row("keys per letter", (", ".join(f"{k} {v}" for k, v in f["key_positions"].items())
                            for f in forms))
    row("key sequence", (f["key_sequence"] or "–" for f in forms))
    row("key patterns", ("; ".join(f["key_patterns"]) or "none" for f in forms))
    columns = []
    for form in a.forms:
        items = []
        for fi in form.items:
            keys = answer(fi, [lang])
            link = E.A(fi.item.id, href=_rel(here, item_path(pr.bank, fi.item.id)))
            items.append(E.LI(link, " ", E.SPAN(f"(key {keys.words.get(lang, '')})",
                                                E.CLASS("key")), ": ",
                              *_stem_excerpt(fi.item, lang)))
        columns.append(E.SECTION(E.H3(f"Form {form.label} ({form.id})"), E.OL(*items)))
    title = f"Forms of {pr.blueprint.id}"
    body = [
        _crumbs(here),
        E.MAIN(
            E.H1(title),
            E.P(f"Bank {pr.bank.id}, seed {a.seed}, solver {data['status']}, mean p spread "
                f"{data['mean_p_spread']:.4f}."),
            E.DIV(E.INPUT(type="checkbox", id="hide-key"),
                  E.LABEL(" Hide the keys", **{"for": "hide-key"}), E.CLASS("toggle")),
            E.H2("Balance"),
            E.TABLE(*rows),
            E.H2("The forms side by side"),
            E.DIV(*columns, E.CLASS("forms")),
            id="content",
        ),
    ]
    return _page(title, here, body)


# --- the index ----------------------------------------------------------------------------------


def _search_text(item: Item) -> str:
    words = [item.id, item.topic, *item.tags]
    for content in item.text.values():
        if content.title:
            words.append(content.title)
        words.append(to_plain(content.stem))
    return " ".join(" ".join(words).lower().split())


def _select(name: str, label: str, values: Iterable[str], extra: Sequence[tuple[str, str]] = ()
            ) -> HtmlElement:
    options = [E.OPTION("all", value="")]
    options += [E.OPTION(text, value=value) for value, text in extra]
    options += [E.OPTION(v, value=v) for v in sorted(set(values))]
    return E.LABEL(label, E.SELECT(*options, name=name))


def _codes(findings: Sequence[Diagnostic], here: str) -> list[Any]:
    """Each finding's severity and rule code (a link to the rule's page)."""
    out: list[Any] = []
    for d in findings:
        code: Any = (E.A(d.code, href=_rel(here, f"rules/{d.code}.html"), title=_text(d.message))
                     if d.code in RULES else d.code)
        out.append(E.SPAN(E.SPAN(d.severity.value, E.CLASS("sev")), " ", code,
                          E.CLASS(f"finding {d.severity.value}")))
    return out


def _excerpt(site: _Site, view: BankView, item: Item, lang: str, here: str) -> HtmlElement:
    """The item's title, else its stem (maths rendered), in the bank's default language."""
    content = item.text.get(lang) or next(iter(item.text.values()))
    lang = lang if lang in item.text else next(iter(item.text))
    if content.title:
        return E.DIV(_text(content.title), E.CLASS("excerpt"), lang=lang)
    return E.DIV(*_md(site, here, view, item.id, content.stem, f"text.{lang}.stem"),
                 E.CLASS("excerpt"), lang=lang)


def _index_row(site: _Site, view: BankView, item: Item, here: str) -> HtmlElement:
    """The item's row of the index's table."""
    bank = view.bank
    first = bank.config.default_language or bank.languages[0]
    findings = view.findings.get(item.id, [])
    item_codes = sorted({d.code for d in findings if d.code})
    losses = view.losses.get(item.id, [])
    lost = sorted({x.fmt for x in losses})
    declared = item.difficulty.value if item.difficulty else "not declared"
    row: HtmlElement = E.TR(
        E.TD(E.A(item.id, href=item_path(bank, item.id)),
             _excerpt(site, view, item, first, here)),
        E.TD(bank.id), E.TD(item.type.value), E.TD(item.topic), E.TD(item.status.value),
        E.TD(_difficulty(item)), E.TD(_observed(view.history.get(item.id, []))),
        E.TD(*(_codes(findings, here) if findings else ["none"])),
        E.TD(", ".join(f"{f} ({sum(1 for x in losses if x.fmt == f)})" for f in lost)
             if lost else "none"),
        **{"data-type": item.type.value, "data-topic": item.topic,
           "data-status": item.status.value, "data-difficulty": declared,
           "data-findings": " ".join(item_codes), "data-search": _text(_search_text(item))},
    )
    return row


def _row_bytes(row: HtmlElement) -> bytes:
    """A row as it reads inside the index page: lxml writes a table's rows one a line, each
    the same bytes alone as among the others (tests/test_preview_incremental.py)."""
    data: bytes = lxml.html.tostring(row, encoding="utf-8", pretty_print=True)
    return data


#: The text of the two rows that stand for the rows while the rest of the index page is
#: written (two: lxml writes a single row on the line of its table's tags, and two or more
#: each on a line of its own).
_ROWS_MARK = "dpassess-preview-rows-9c41d7"


def _marks() -> list[HtmlElement]:
    return [E.TR(E.TD(_ROWS_MARK)), E.TR(E.TD(_ROWS_MARK))]


def _split(page: bytes) -> tuple[bytes, bytes] | None:
    """The index page written with the placeholder rows -> the bytes before and after them,
    or None when their bytes are not there exactly once (then the page is written whole)."""
    mark = b"".join(_row_bytes(row) for row in _marks())
    at = page.find(mark)
    if at < 0 or page.find(mark, at + 1) >= 0:
        return None
    return page[:at], page[at + len(mark):]


def _index_page(site: _Site, views: Sequence[BankView], assemblies: Sequence[Assembly],
                store: PageStore | None = None, keys: Sequence[Sequence[bytes]] = ()
                ) -> bytes:
    """The index: a header, a row per item (each made, or taken from `store.rows` by its key
    in `keys`: per bank, per item), and a footer. The rows are made alone and spliced in
    between, so that one changed item makes one row."""
    here = "index.html"
    n_items = sum(len(v.bank) for v in views)
    rows: list[bytes] = []
    #: each row made or taken: its key and warnings (None: it shows an image, not kept)
    made: list[tuple[bytes, tuple[Diagnostic, ...]] | None] = []
    for n, view in enumerate(views):
        bank_keys = keys[n] if store is not None else ()
        for k, item in enumerate(view.bank):
            key = bank_keys[k] if store is not None else b""
            taken = store.rows.get(key) if store is not None else None
            if taken is not None:
                site.warnings += taken[1]
                rows.append(taken[0])
                made.append((key, taken[1]))
                continue
            mark, images = len(site.warnings), site.images
            rows.append(_row_bytes(_index_row(site, view, item, here)))
            made.append((key, tuple(site.warnings[mark:])) if site.images == images else None)
    codes = sorted({d.code for v in views for fs in v.findings.values() for d in fs if d.code})
    types, topics, statuses, levels = set(), set(), set(), set()
    for v in views:
        for it in v.bank:
            types.add(it.type)
            topics.add(it.topic)
            statuses.add(it.status)
            levels.add(it.difficulty)
    filters = E.FORM(
        E.LABEL("Search (any language)", E.INPUT(type="search", name="q")),
        _select("type", "Type", (t.value for t in types)),
        _select("topic", "Topic", topics),
        _select("status", "Status", (s.value for s in statuses)),
        _select("difficulty", "Difficulty",
                (d.value if d else "not declared" for d in levels)),
        _select("finding", "Finding", codes, [("any", "any finding"), ("none", "no finding")]),
        E.CLASS("filters"), id="filters", hidden="hidden", role="search",
        **{"aria-label": "Filter the items"},
    )
    bank_notes: list[Any] = []
    for view in views:
        general = view.findings.get("", []) + view.problems
        losses = view.losses.get("", [])
        if general or losses:
            bank_notes.append(E.H3(f"Bank {view.bank.id}"))
            if general:
                bank_notes.append(E.UL(*(_finding(d, here) for d in general),
                                       E.CLASS("findings")))
            if losses:
                bank_notes.append(E.UL(*(E.LI(f"{x.fmt} ({x.lang}): " if x.lang else f"{x.fmt}: ",
                                              _text(x.diagnostic.message)) for x in losses)))
    forms = [E.LI(E.A(f"Forms of {a.problem.blueprint.id}",
                      href=f"forms/{a.problem.blueprint.id}.html"),
                  f" ({len(a.forms)} forms from bank {a.problem.bank.id})")
             for a in sorted(assemblies, key=lambda a: a.problem.blueprint.id)]
    names = ", ".join(v.bank.id for v in views)
    n_find = sum(1 for v in views for k, fs in v.findings.items() if fs and k in v.bank)

    def page(body_rows: list[Any]) -> bytes:
        body = [
            E.MAIN(
                E.H1(f"Item bank preview: {names}"),
                E.P(f"{n_items} items; {n_find} with lint findings. Each item's page "
                    "shows it in every language as a student sees it, then its key. ",
                    E.A("The lint rules", href="rules/index.html"), "."),
                *([E.H2("Assembled forms"), E.UL(*forms)] if forms else []),
                E.H2("Items"),
                filters,
                E.P(f"{n_items} items", id="shown", role="status"),
                E.TABLE(
                    E.THEAD(E.TR(*(E.TH(h, scope="col") for h in (
                        "Item", "Bank", "Type", "Topic", "Status", "Difficulty (declared)",
                        "Difficulty (observed)", "Lint findings", "Export warnings")))),
                    E.TBODY(*body_rows), id="items",
                ),
                *([E.H2("About the banks as a whole"), *bank_notes] if bank_notes else []),
                id="content",
            ),
        ]
        return _page(f"Item bank preview: {names}", here, body, script=True)

    parts = _split(page(_marks())) if len(rows) > 1 else None
    if parts is None:
        # one row or none, or the placeholders' bytes met elsewhere: the page whole, from rows
        # made again (their warnings and images are the site's already)
        scratch = _Site()
        return page([_index_row(scratch, v, it, here) for v in views for it in v.bank])
    head, tail = parts
    if store is not None:
        offset = len(head)
        for entry, data in zip(made, rows, strict=True):
            if entry is not None:
                store.places[entry[0]] = (offset, len(data), entry[1])
            offset += len(data)
    return head + b"".join(rows) + tail
