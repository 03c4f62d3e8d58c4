"""An item analysis -> the Indonesian item-analysis report a teacher hands in (the *analisis butir
soal* that ANATES prints): per item its difficulty p, discrimination D, how each option worked,
and a decision (diterima / direvisi / dibuang), with the test's KR-20 and SEM; one printable HTML
page (A4, no script, no external file), the same bytes for the same analysis.

The decision rule (docs/stats.md, "Laporan analisis butir"): *dibuang* (drop) when the item
discriminates negatively, or poorly (D below 0.20) while being too hard or too easy; *direvisi*
(revise) when it is flagged otherwise (D below 0.20, too hard, too easy, a possible second key, a
distractor that does not work); *diterima* (keep) when it has no flag.
"""

from __future__ import annotations

from collections.abc import Sequence

import lxml.html
from lxml.html import HtmlElement
from lxml.html import builder as E

from dpassess.stats.analysis import Analysis, ItemStats
from dpassess.stats.report import BAND_WORDS, FLAG_WORDS, num
from dpassess.stats.report_html import _t

KEEP, REVISE, DROP = "diterima", "direvisi", "dibuang"

CSS = """
@page { size: A4 landscape; margin: 12mm; }
body { font-family: sans-serif; font-size: 10pt; margin: 1em; }
h1 { font-size: 14pt; margin: 0 0 0.3em; }
table { border-collapse: collapse; width: 100%; margin: 0.5em 0 1em; }
td, th { border: 1px solid #444; padding: 2px 4px; vertical-align: top; }
th { background: #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.dibuang { font-weight: bold; color: #a40000; }
td.direvisi { font-weight: bold; color: #8a5a00; }
.sign { display: flex; justify-content: space-between; margin-top: 2.5em; }
.sign div { width: 40%; }
@media print { body { margin: 0; } tr { page-break-inside: avoid; } }
"""


def decision(s: ItemStats) -> str:
    """diterima, direvisi or dibuang, by the rule in the module's docstring."""
    flags = set(s.flags)
    if "negative-discrimination" in flags:
        return DROP
    if "low-discrimination" in flags and flags & {"too-hard", "too-easy"}:
        return DROP
    return REVISE if flags else KEEP


def _options(s: ItemStats) -> str:
    """Each option: its share, * for the key, a mark for a distractor that does not work."""
    parts = []
    for o in s.options:
        mark = "*" if o.key else ("" if o.works or o.works is None else " ✗")
        parts.append(f"{o.option}{mark} {o.share:.0%}")
    return "; ".join(parts) if parts else "-"


def _row(n: int, s: ItemStats) -> HtmlElement:
    fw, bw = FLAG_WORDS["id"], BAND_WORDS["id"]
    d = decision(s)
    notes = ", ".join(fw[f] for f in s.flags) or "-"
    return E.TR(
        E.TD(str(n), E.CLASS("num")), E.TD(_t(s.item)), E.TD(str(s.n), E.CLASS("num")),
        E.TD(f"{s.p:.2f}", E.CLASS("num")), E.TD(bw[s.difficulty_band]),
        E.TD(f"{s.d:.2f}", E.CLASS("num")), E.TD(bw[s.discrimination_band]),
        E.TD(num(s.r_pb, 2), E.CLASS("num")), E.TD(_t(_options(s))), E.TD(_t(notes)),
        E.TD(d, E.CLASS(d)),
    )


def _part(a: Analysis) -> list[HtmlElement]:
    t = a.test
    counts = {k: sum(1 for s in a.items if decision(s) == k) for k in (KEEP, REVISE, DROP)}
    form = f" · paket {_t(a.form)}" if a.form else ""
    return [
        E.H1(f"Analisis Butir Soal: {_t(a.source.path)}{form}"),
        E.P(f"Bank {_t(a.source.bank)} · {t.n} peserta · {t.k} butir · rerata {t.mean:.2f} dari "
            f"{t.points:g} · simpangan baku {t.sd:.2f} · reliabilitas KR-20 {num(t.kr20)} · "
            f"alpha {num(t.alpha)} · SEM {num(t.sem, 2)} · sha256 {a.source.sha256[:12]}"),
        E.TABLE(
            E.TR(*(E.TH(h) for h in ("No", "Butir", "n", "p", "Tingkat kesukaran", "D",
                                     "Daya pembeda", "r_pb", "Pengecoh (* kunci, ✗ tidak "
                                     "berfungsi)", "Catatan", "Keputusan"))),
            *(_row(n, s) for n, s in enumerate(a.items, start=1)),
        ),
        E.P(f"Keputusan: {counts[KEEP]} diterima, {counts[REVISE]} direvisi, "
            f"{counts[DROP]} dibuang."),
    ]


def to_anates(analyses: Sequence[Analysis]) -> bytes:
    """The printable Indonesian report page (UTF-8) of one file's administrations."""
    a0 = analyses[0]
    th = a0.thresholds
    body: list[HtmlElement] = []
    for a in analyses:
        body += _part(a)
    body += [
        E.H2("Kriteria"),
        E.UL(
            E.LI(f"Tingkat kesukaran p: sukar p < {th.hard_below:.2f}, sedang sampai "
                 f"{th.easy_above:.2f}, mudah di atasnya; terlalu sukar p < {th.too_hard:.2f}, "
                 f"terlalu mudah p > {th.too_easy:.2f}."),
            E.LI(f"Daya pembeda D (27% kelompok atas dan bawah): jelek D < {th.fair:.2f}, cukup "
                 f"sampai {th.good:.2f}, baik sampai {th.excellent:.2f}, baik sekali di atasnya; "
                 "negatif: kelompok bawah lebih banyak menjawab benar."),
            E.LI(f"Pengecoh berfungsi bila dipilih sedikitnya {th.min_distractor_share:.0%} "
                 "peserta dan lebih banyak oleh kelompok bawah daripada kelompok atas."),
            E.LI("Dibuang: daya pembeda negatif, atau jelek sekaligus terlalu sukar/terlalu "
                 "mudah. Direvisi: butir dengan catatan lain. Diterima: tanpa catatan."),
        ),
        E.DIV(E.CLASS("sign"),
              E.DIV(E.P("Mengetahui,"), E.P("Kepala Sekolah"), E.BR(), E.BR(),
                    E.P("(.................................)")),
              E.DIV(E.P("Guru Mata Pelajaran"), E.BR(), E.BR(), E.BR(),
                    E.P("(.................................)"))),
    ]
    doc = E.HTML(
        E.HEAD(E.META(charset="utf-8"), E.TITLE(f"Analisis Butir Soal: {_t(a0.source.path)}"),
               E.STYLE(CSS)),
        E.BODY(*body),
        lang="id",
    )
    out: bytes = lxml.html.tostring(doc, doctype="<!DOCTYPE html>", encoding="utf-8",
                                    pretty_print=True)
    return out
