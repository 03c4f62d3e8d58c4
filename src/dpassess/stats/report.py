"""An item analysis -> a terminal table or JSON, and the labels (Indonesian, English) that the
text and HTML reports share."""

from __future__ import annotations

import json

from dpassess.stats.analysis import Analysis, ItemStats
from dpassess.stats.dif import language_name

WORDS: dict[str, dict[str, str]] = {
    "en": {
        "title": "Item analysis", "bank": "bank", "persons": "persons", "items": "items",
        "item": "item", "flags": "flags", "test": "Test", "mean": "mean", "sd": "SD",
        "sem": "SEM", "alpha_del": "α if deleted", "difficulty": "Difficulty (p)",
        "discrimination": "Discrimination (D)", "r_pb": "Point-biserial (r_pb)",
        "reliability": "Reliability", "option": "Option", "key": "key", "share": "chose",
        "mean_total": "mean total", "upper": "upper group", "lower": "lower group",
        "works": "works", "yes": "yes", "no": "no", "omitted": "omitted", "missing": "no answer",
        "histogram": "Total scores", "score": "score", "count": "persons", "none": "none",
        "distractors": "distractors", "form": "form", "band_d": "band", "band_p": "band",
        "range": "range", "points": "points", "n": "n", "summary": "Items",
        "legend_all": "all persons", "legend_upper": "upper 27%", "legend_lower": "lower 27%",
    },
    "id": {
        "title": "Analisis butir soal", "bank": "bank", "persons": "peserta", "items": "butir",
        "item": "butir", "flags": "catatan", "test": "Tes", "mean": "rerata",
        "sd": "simpangan baku", "sem": "SEM", "alpha_del": "α jika dihapus",
        "difficulty": "Tingkat kesukaran (p)", "discrimination": "Daya pembeda (D)",
        "r_pb": "Korelasi point-biserial (r_pb)", "reliability": "Reliabilitas",
        "option": "Pilihan", "key": "kunci", "share": "memilih", "mean_total": "rerata skor total",
        "upper": "kelompok atas", "lower": "kelompok bawah", "works": "berfungsi", "yes": "ya",
        "no": "tidak", "omitted": "tidak dijawab", "missing": "tanpa jawaban",
        "histogram": "Sebaran skor total", "score": "skor", "count": "peserta", "none": "tidak ada",
        "distractors": "pengecoh", "form": "paket", "band_d": "kategori", "band_p": "kategori",
        "range": "rentang", "points": "poin", "n": "n", "summary": "Butir",
        "legend_all": "semua peserta", "legend_upper": "27% atas", "legend_lower": "27% bawah",
    },
}

FLAG_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "negative-discrimination": "negative discrimination",
        "low-discrimination": "low discrimination",
        "too-hard": "too hard",
        "too-easy": "too easy",
        "possible-second-key": "a distractor chosen more by high scorers (second key?)",
        "non-functional-distractor": "non-functional distractor",
    },
    "id": {
        "negative-discrimination": "daya pembeda negatif",
        "low-discrimination": "daya pembeda rendah",
        "too-hard": "terlalu sukar",
        "too-easy": "terlalu mudah",
        "possible-second-key": "pengecoh lebih banyak dipilih kelompok atas (kunci ganda?)",
        "non-functional-distractor": "pengecoh tidak berfungsi",
    },
}

DIF_WORDS: dict[str, dict[str, str]] = {
    "en": {"title": "Languages (DIF: Mantel-Haenszel, ETS categories A/B/C)",
           "c": "{item}: the {ref} and {focal} versions do not measure the same thing (ETS C)"},
    "id": {"title": "Bahasa (DIF: Mantel-Haenszel, kategori ETS A/B/C)",
           "c": "{item}: versi {ref} dan {focal} tidak mengukur hal yang sama (ETS C)"},
}

BAND_WORDS: dict[str, dict[str, str]] = {
    "en": {"hard": "hard", "medium": "medium", "easy": "easy", "negative": "negative",
           "poor": "poor", "fair": "fair", "good": "good", "excellent": "excellent"},
    "id": {"hard": "sukar", "medium": "sedang", "easy": "mudah", "negative": "negatif",
           "poor": "jelek", "fair": "cukup", "good": "baik", "excellent": "baik sekali"},
}


def words(lang: str) -> dict[str, str]:
    return WORDS.get(lang, WORDS["en"])


def label_lang(lang: str) -> str:
    """The language the labels are in: `lang` if there are labels in it, else English."""
    return lang if lang in WORDS else "en"


def num(value: float | None, places: int = 3) -> str:
    return "-" if value is None else f"{value:.{places}f}"


def flag_notes(s: ItemStats, lang: str) -> list[str]:
    """Each flag in words, with the options it concerns."""
    fw = FLAG_WORDS[label_lang(lang)]
    out = []
    for f in s.flags:
        note = fw[f]
        if f == "possible-second-key":
            note += ": " + ", ".join(o.option for o in s.options if o.second_key)
        elif f == "non-functional-distractor":
            note += ": " + ", ".join(f"{o.option} ({o.share:.0%})" for o in s.options
                                     if o.works is False and not o.second_key)
        out.append(note)
    return out


def to_text(analysis: Analysis, lang: str = "en") -> str:
    """A table for the terminal: one line per item, the test's figures, then the flags."""
    w = words(lang)
    t = analysis.test
    width = max([len(w["item"]), *(len(s.item) for s in analysis.items)])
    form = f"{w['form']} {analysis.form}, " if analysis.form else ""
    lines = [f"{w['title']}: {analysis.source.path} ({w['bank']} {analysis.source.bank}, "
             f"{form}{t.n} {w['persons']}, {t.k} {w['items']})", ""]
    head = f"{w['item']:<{width}}  {'n':>6}  {'p':>6}  {'D':>6}  {'r_pb':>6}  {w['flags']}"
    lines += [head, "-" * len(head)]
    for s in analysis.items:
        flags = ", ".join(FLAG_WORDS[label_lang(lang)][f] for f in s.flags)
        lines.append(f"{s.item:<{width}}  {s.n:>6}  {s.p:>6.3f}  {s.d:>6.3f}  "
                     f"{num(s.r_pb):>6}  {flags}".rstrip())
        for gid, p in s.gaps:  # a cloze item's gaps, each under it
            lines.append(f"{'  [[' + gid + ']]':<{width}}  {'':>6}  {p:>6.3f}")
    lines += ["", f"{w['test']}: n {t.n} · k {t.k} · {w['mean']} {t.mean:.2f} / {t.points:g} · "
              f"{w['sd']} {t.sd:.2f} · KR-20 {num(t.kr20)} · alpha {num(t.alpha)} · "
              f"SEM {num(t.sem, 2)}"]
    flagged = [s for s in analysis.items if s.flags]
    if flagged:
        lines.append("")
        for s in flagged:
            lines.append(f"{s.item}: " + "; ".join(flag_notes(s, lang)))
    if analysis.dif:
        lines += ["", DIF_WORDS[label_lang(lang)]["title"], ""]
        head = (f"{w['item']:<{width}}  {'lang':>7}  {'n':>9}  {'alpha_MH':>8}  {'D-DIF':>6}  "
                f"{'SE':>5}  {'p':>6}  ETS  {'STD-P':>6}")
        lines += [head, "-" * len(head)]
        for d in analysis.dif:
            lines.append(f"{d.item:<{width}}  {d.reference + '/' + d.focal:>7}  "
                         f"{f'{d.n_reference}/{d.n_focal}':>9}  {num(d.alpha_mh, 3):>8}  "
                         f"{num(d.delta, 2):>6}  {num(d.se, 2):>5}  {num(d.p_value, 3):>6}  "
                         f"{d.category or '-':>3}  {num(d.std_p_dif, 3):>6}")
        for d in analysis.dif:
            if d.category == "C":
                lines.append("")
                lines.append(DIF_WORDS[label_lang(lang)]["c"].format(
                    item=d.item, ref=language_name(d.reference), focal=language_name(d.focal)))
    return "\n".join(lines) + "\n"


def to_json(analysis: Analysis) -> str:
    return json.dumps(analysis.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


MOODLE_WORDS = {
    "en": ("Moodle's names (Quiz → Results → Statistics)", "Facility index",
           "Discrimination index", "Discriminative efficiency",
           "Coefficient of internal consistency (CIC)"),
    "id": ("Nama-nama Moodle (Kuis → Hasil → Statistik)", "Indeks fasilitas",
           "Indeks diskriminasi", "Efisiensi diskriminatif",
           "Koefisien konsistensi internal (CIC)"),
}


def to_moodle(analysis: Analysis, lang: str = "en") -> str:
    """The item figures under the names of Moodle's quiz Statistics report (percentages), to be
    read beside it: facility index, discrimination index, discriminative efficiency, and the
    test's coefficient of internal consistency."""
    title, facility, discrimination, efficiency, cic = MOODLE_WORDS[label_lang(lang)]
    w = words(lang)
    width = max([len(w["item"]), *(len(s.item) for s in analysis.items)])
    lines = [f"{title}: {analysis.source.path}", ""]
    head = f"{w['item']:<{width}}  {facility:>14}  {discrimination:>20}  {efficiency:>25}"
    lines += [head, "-" * len(head)]
    for s in analysis.items:
        lines.append(f"{s.item:<{width}}  {s.facility_index:>13.2f}%  "
                     f"{_pct(s.discrimination_index):>20}  {_pct(s.discriminative_efficiency):>25}")
    alpha = analysis.test.alpha
    lines += ["", f"{cic}: {_pct(100 * alpha if alpha is not None else None)}"]
    return "\n".join(lines) + "\n"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}%"
