"""An item analysis -> one self-contained HTML page: the test's figures and score histogram, a
table of every item, and per item its statistics, an option chart and its flags.

Built with lxml (charts are inline SVG elements, never strings); no script, no external file, no
time stamp: the same analysis gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import lxml.html
from lxml.html import HtmlElement
from lxml.html import builder as E

from dpassess.markup.markdown import item_title, to_plain
from dpassess.markup.xmlchars import xml_safe
from dpassess.model import Item
from dpassess.stats.analysis import Analysis, ItemStats, OptionStats, TestStats
from dpassess.stats.report import (
    BAND_WORDS,
    DIF_WORDS,
    FLAG_WORDS,
    flag_notes,
    label_lang,
    num,
    words,
)

CSS = """
body { font-family: sans-serif; max-width: 60em; margin: 2em auto; line-height: 1.4; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
td, th { border: 1px solid #aaa; padding: 0.15em 0.5em; text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
section.item { border-top: 1px solid #888; margin-top: 1.5em; }
ul.flags { color: #a40000; }
.chart text { font-size: 11px; font-family: sans-serif; }
"""

#: Colours of the option chart: all persons, upper group, lower group.
FILL = {"all": "#4a6fa5", "upper": "#2e8b57", "lower": "#c0504d"}
HIST_FILL = "#4a6fa5"
#: Most bars of the histogram; more distinct totals are put into equal bins.
MAX_BARS = 40


def _t(text: str) -> str:
    return xml_safe(text)[0]


def _f(v: float) -> str:
    """A coordinate: one decimal, no "-0.0"."""
    s = f"{v:.1f}"
    return "0.0" if s == "-0.0" else s


def _svg(width: int, height: int, label: str, *children: HtmlElement) -> HtmlElement:
    return E.E("svg", *children, {"class": "chart", "width": str(width), "height": str(height),
                                  "viewBox": f"0 0 {width} {height}", "role": "img",
                                  "aria-label": label, "xmlns": "http://www.w3.org/2000/svg"})


def _el(tag: str, text: str | None = None, **attrib: str) -> HtmlElement:
    el = E.E(tag, {k.rstrip("_").replace("_", "-"): v for k, v in attrib.items()})
    if text is not None:
        el.text = text
    return el


def _rect(x: float, y: float, w: float, h: float, fill: str, title: str) -> HtmlElement:
    r = _el("rect", x=_f(x), y=_f(y), width=_f(max(w, 0.0)), height=_f(max(h, 0.0)), fill=fill)
    r.append(_el("title", title))
    return r


def histogram_svg(test: TestStats, lang: str) -> HtmlElement:
    """Bars of how many persons have each total score (binned above MAX_BARS values)."""
    w = words(lang)
    bins = _bins(test)
    width, height, left, bottom, top = 520, 180, 36, 28, 10
    plot_w, plot_h = width - left - 10, height - bottom - top
    most = max(c for _, _, c in bins)
    bar = plot_w / len(bins)
    parts: list[HtmlElement] = [
        _el("line", x1=str(left), y1=_f(top + plot_h), x2=_f(left + plot_w), y2=_f(top + plot_h),
            stroke="#000"),
        _el("text", str(most), x=_f(left - 4), y=_f(top + 8), text_anchor="end"),
        _el("text", "0", x=_f(left - 4), y=_f(top + plot_h), text_anchor="end"),
    ]
    for i, (lo, hi, count) in enumerate(bins):
        h = plot_h * count / most
        name = f"{lo:g}" if lo == hi else f"{lo:g}–{hi:g}"
        parts.append(_rect(left + i * bar + 1, top + plot_h - h, bar - 2, h, HIST_FILL,
                           f"{w['score']} {name}: {count} {w['count']}"))
        if i % math.ceil(len(bins) / 10) == 0:
            parts.append(_el("text", f"{lo:g}", x=_f(left + (i + 0.5) * bar), y=_f(height - 12),
                             text_anchor="middle"))
    return _svg(width, height, w["histogram"], *parts)


def _bins(test: TestStats) -> list[tuple[float, float, int]]:
    """(lowest score, highest score, persons) per bar: every score from the lowest to the
    highest (whole scores: one bar per score, or per run of scores above MAX_BARS of them)."""
    lo, hi = test.histogram[0][0], test.histogram[-1][0]
    if all(s == int(s) for s, _ in test.histogram):
        width = max(1, math.ceil((hi - lo + 1) / MAX_BARS))
        bars = [[lo + i * width, lo + (i + 1) * width - 1, 0]
                for i in range(int((hi - lo) // width) + 1)]
        for s, c in test.histogram:
            bars[int((s - lo) // width)][2] += c
        return [(a, min(b, hi), int(c)) for a, b, c in bars]
    if len(test.histogram) <= MAX_BARS:
        return [(s, s, c) for s, c in test.histogram]
    step = (hi - lo) / MAX_BARS
    out = [[lo + i * step, lo + (i + 1) * step, 0] for i in range(MAX_BARS)]
    for s, c in test.histogram:
        out[min(int((s - lo) / step), MAX_BARS - 1)][2] += c
    return [(round(a, 2), round(b, 2), int(c)) for a, b, c in out]


def options_svg(stats: ItemStats, labels: dict[str, str], lang: str) -> HtmlElement:
    """Per option three bars: share of all persons, of the upper and of the lower group."""
    w = words(lang)
    row, left, width = 42, 120, 520
    plot_w = width - left - 50
    height = row * len(stats.options) + 24
    parts: list[HtmlElement] = []
    for i, o in enumerate(stats.options):
        y = 4 + i * row
        name = labels[o.option] + (f" ({w['key']})" if o.key else "")
        parts.append(_el("text", name, x="4", y=_f(y + 16)))
        for j, (what, share) in enumerate((("all", o.share), ("upper", o.upper),
                                           ("lower", o.lower))):
            legend = w[f"legend_{what}"]
            parts.append(_rect(left, y + j * 12, plot_w * share, 10, FILL[what],
                               f"{labels[o.option]}: {legend} {share:.0%}"))
            parts.append(_el("text", f"{share:.0%}", x=_f(left + plot_w * share + 4),
                             y=_f(y + j * 12 + 9)))
    y = height - 8
    for j, what in enumerate(("all", "upper", "lower")):
        x = left + j * 120
        parts.append(_el("rect", x=_f(x), y=_f(y - 9), width="10", height="10", fill=FILL[what]))
        parts.append(_el("text", w[f"legend_{what}"], x=_f(x + 14), y=_f(y)))
    return _svg(width, height, f"{w['option']}: {stats.item}", *parts)


def _cell(text: str, numeric: bool = False) -> HtmlElement:
    return E.TD(text, E.CLASS("num")) if numeric else E.TD(text)


def _head(*names: str, numeric: Sequence[int] = ()) -> HtmlElement:
    return E.TR(*(E.TH(n, E.CLASS("num")) if i in numeric else E.TH(n)
                  for i, n in enumerate(names)))


def _test_table(test: TestStats, lang: str) -> HtmlElement:
    w = words(lang)
    rows = [("n", str(test.n)), ("k", str(test.k)), (w["points"], f"{test.points:g}"),
            (w["mean"], f"{test.mean:.2f}"), (w["sd"], f"{test.sd:.2f}"),
            (w["range"], f"{test.min:g}–{test.max:g}"), ("KR-20", num(test.kr20)),
            ("Cronbach's alpha", num(test.alpha)), (w["sem"], num(test.sem, 2))]
    return E.TABLE(*(E.TR(E.TH(k), _cell(v, True)) for k, v in rows))


def _summary_table(analysis: Analysis, lang: str) -> HtmlElement:
    w = words(lang)
    fw, bw = FLAG_WORDS[label_lang(lang)], BAND_WORDS[label_lang(lang)]
    rows = [_head(w["item"], "n", "p", w["band_p"], "D", w["band_d"], "r_pb", w["alpha_del"],
                  w["flags"], numeric=(1, 2, 4, 6, 7))]
    for s in analysis.items:
        rows.append(E.TR(
            E.TD(E.A(s.item, href=f"#item-{s.item}")), _cell(str(s.n), True),
            _cell(f"{s.p:.3f}", True), _cell(bw[s.difficulty_band]), _cell(f"{s.d:.3f}", True),
            _cell(bw[s.discrimination_band]), _cell(num(s.r_pb), True),
            _cell(num(s.alpha_if_deleted), True), _cell(", ".join(fw[f] for f in s.flags)),
        ))
    return E.TABLE(*rows)


def _dif_table(analysis: Analysis, lang: str) -> HtmlElement:
    """The items' DIF between languages (Mantel-Haenszel, ETS categories)."""
    w = words(lang)
    rows = [_head(w["item"], "ref/focal", "n", "α_MH", "MH D-DIF", "SE", "p", "ETS", "STD P-DIF",
                  numeric=(3, 4, 5, 6, 8))]
    for d in analysis.dif:
        rows.append(E.TR(
            E.TD(E.A(d.item, href=f"#item-{d.item}")), _cell(f"{d.reference}/{d.focal}"),
            _cell(f"{d.n_reference}/{d.n_focal}"), _cell(num(d.alpha_mh), True),
            _cell(num(d.delta, 2), True), _cell(num(d.se, 2), True),
            _cell(num(d.p_value), True), _cell(d.category or "-"),
            _cell(num(d.std_p_dif), True),
        ))
    return E.TABLE(*rows)


def _text_lang(item: Item, lang: str) -> str:
    return lang if lang in item.text else next(iter(item.text))


def _item_section(s: ItemStats, item: Item, lang: str) -> HtmlElement:
    w = words(lang)
    bw = BAND_WORDS[label_lang(lang)]
    tl = _text_lang(item, lang)
    labels = {oid: chr(ord("a") + i) if i < 26 else oid
              for i, oid in enumerate(item.choice_ids)}
    figures = E.TABLE(
        E.TR(E.TH(w["difficulty"]), _cell(f"{s.p:.3f}", True), E.TD(bw[s.difficulty_band])),
        E.TR(E.TH(w["discrimination"]), _cell(f"{s.d:.3f}", True),
             E.TD(bw[s.discrimination_band])),
        E.TR(E.TH(w["r_pb"]), _cell(num(s.r_pb), True), E.TD("")),
        E.TR(E.TH(w["alpha_del"]), _cell(num(s.alpha_if_deleted), True), E.TD("")),
        E.TR(E.TH("n"), _cell(str(s.n), True),
             E.TD(f"{w['omitted']}: {s.omitted}" + (f", {w['missing']}: {s.missing}"
                                                   if s.missing else ""))),
    )
    rows = [_head(w["option"], "", w["share"], w["mean_total"], w["upper"], w["lower"],
                  w["works"], numeric=(2, 3, 4, 5))]
    for o in s.options:
        rows.append(E.TR(
            E.TD(labels[o.option] + (f" ({w['key']})" if o.key else "")),
            E.TD(_t(to_plain(item.option_text(tl, o.option))), E.BR(), E.SMALL(o.option)),
            _cell(f"{o.n} ({o.share:.0%})", True), _cell(num(o.mean_total, 2), True),
            _cell(f"{o.upper:.0%}", True), _cell(f"{o.lower:.0%}", True),
            _cell(_works(o, lang)),
        ))
    notes = flag_notes(s, lang)
    body: list[HtmlElement] = [
        E.H3(f"{s.item}: {_t(item_title(item, tl) or item.id)}"),
        E.P(_t(to_plain(item.text[tl].stem))),
        figures,
    ]
    if s.options:  # distractor analysis: only items with options to choose among
        body += [E.TABLE(*rows), options_svg(s, labels, lang)]
    if notes:
        body.append(E.UL(*(E.LI(n) for n in notes), E.CLASS("flags")))
    return E.SECTION(*body, E.CLASS("item"), id=f"item-{s.item}")


def _works(o: OptionStats, lang: str) -> str:
    w = words(lang)
    if o.works is None:
        return ""
    return w["yes"] if o.works else w["no"]


def to_html(analysis: Analysis, lang: str = "en") -> bytes:
    """The report page (UTF-8), labels in `lang` (id or en; others get English labels)."""
    return to_html_many([analysis], lang)


def _parts(analysis: Analysis, lang: str, heading: str) -> list[HtmlElement]:
    w = words(lang)
    src = analysis.source
    forms = f" · {w['form']} {', '.join(src.forms)}" if any(src.forms) else ""
    bank = analysis.bank
    return [
        E.HEADER(E.H1(heading),
                 E.P(f"{w['bank']} {src.bank}{forms} · {analysis.test.n} {w['persons']} · "
                     f"{analysis.test.k} {w['items']} · sha256 {src.sha256[:12]}")),
        E.SECTION(E.H2(f"{w['test']} · {w['reliability']}"),
                  _test_table(analysis.test, lang),
                  E.H3(w["histogram"]), histogram_svg(analysis.test, lang)),
        E.SECTION(E.H2(w["summary"]), _summary_table(analysis, lang)),
        *([E.SECTION(E.H2(DIF_WORDS[label_lang(lang)]["title"]), _dif_table(analysis, lang))]
          if analysis.dif else []),
        *(_item_section(s, bank.get(s.item), lang) for s in analysis.items),
    ]


def to_html_many(analyses: Sequence[Analysis], lang: str = "en") -> bytes:
    """One page for the administrations of one file (one per form when the forms hold
    different items), each with its own heading."""
    w = words(lang)
    title = f"{w['title']}: {_t(analyses[0].source.path)}"
    body: list[HtmlElement] = []
    for a in analyses:
        heading = f"{title} · {w['form']} {_t(a.form)}" if a.form else title
        body += _parts(a, lang, heading)
    doc = E.HTML(
        E.HEAD(E.META(charset="utf-8"), E.TITLE(title), E.STYLE(CSS)),
        E.BODY(*body),
        lang=label_lang(lang),
    )
    out: bytes = lxml.html.tostring(doc, doctype="<!DOCTYPE html>", encoding="utf-8",
                                    pretty_print=True)
    return out
