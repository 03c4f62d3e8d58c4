"""Indonesian stemmers on labelled word pairs -> agreement and time per word, printed.

The glossary rule (TR005) asks one question of a stemmer: are two words forms of one word? This
scores `dpassess.lint.stem` and, when installed, PySastrawi and Snowball's Indonesian stemmer
(`pip install PySastrawi snowballstemmer`) on pairs labelled by hand: forms of one word (a
rendering and an inflected use of it) and different words that look alike.

    python benchmarks/lint_stemmer.py
"""

from __future__ import annotations

import time
from collections.abc import Callable

from dpassess.lint.stem import same_word

#: Forms of one word: (a glossary rendering's word, the word in a text).
SAME = [
    ("rata-rata", "rata-ratanya"), ("rata-rata", "rata-ratalah"), ("median", "mediannya"),
    ("baku", "bakunya"), ("simpangan", "simpangannya"), ("sampel", "sampelnya"),
    ("sampel", "sampel-sampel"), ("sampel", "sampel-sampelnya"), ("variansi", "variansinya"),
    ("kepercayaan", "kepercayaannya"), ("galat", "galatnya"), ("peluang", "peluangnya"),
    ("data", "datanya"), ("nilai", "nilainya"), ("nilai", "menilai"), ("nilai", "dinilai"),
    ("nilai", "penilaian"), ("tulis", "menulis"), ("tulis", "ditulis"), ("tulis", "penulisan"),
    ("sapu", "menyapu"), ("kirim", "mengirim"), ("kirim", "dikirimkan"), ("pakai", "memakai"),
    ("pakai", "dipakai"), ("baku", "membakukan"), ("baku", "dibakukan"), ("baku", "pembakuan"),
    ("hitung", "menghitung"), ("hitung", "dihitung"), ("hitung", "perhitungan"),
    ("uji", "pengujian"), ("uji", "diuji"), ("ukur", "mengukur"), ("ukur", "pengukuran"),
    ("amat", "pengamatan"), ("amat", "mengamati"), ("shard", "men-shard"), ("shard", "di-shard"),
    ("tinggi", "ketinggian"), ("sebar", "penyebaran"), ("sebar", "tersebar"),
    ("sinkron", "menyinkronkan"), ("banding", "perbandingan"), ("banding", "dibandingkan"),
    ("ubah", "perubahan"), ("ubah", "berubah"), ("duga", "pendugaan"), ("duga", "menduga"),
    ("acak", "diacak"), ("acak", "pengacakan"), ("rata-rata", "merata-ratakan"),
    ("rata-rata", "dirata-ratakan"), ("bobot", "bobotnya"), ("gradien", "gradiennya"),
    ("hipotesis", "hipotesisnya"), ("model", "modelnya"), ("replika", "replikanya"),
    ("distribusi", "distribusinya"), ("interval", "intervalnya"),
]
#: Different words that share letters.
DIFFERENT = [
    ("rata-rata", "rapat"), ("median", "media"), ("baku", "bakul"), ("sampel", "sampai"),
    ("nilai", "nila"), ("galat", "gala"), ("peluang", "pelurus"), ("modus", "model"),
    ("variansi", "variasi"), ("tulis", "tulang"), ("ukur", "ukir"), ("hitung", "hiting"),
    ("bobot", "robot"), ("data", "dada"), ("selang", "sela"), ("simpangan", "simpanan"),
    ("uji", "uang"), ("banding", "bandung"), ("acak", "acara"), ("kirim", "kiri"),
    ("ubah", "buah"), ("duga", "dua"), ("sebar", "sabar"), ("tinggi", "tangga"),
    ("amat", "alamat"), ("kepercayaan", "kepala"), ("peubah", "pengubah"),
]


def _score(name: str, same: Callable[[str, str], bool]) -> None:
    t0 = time.perf_counter()
    hits = sum(same(a, b) for a, b in SAME)
    false = sum(same(a, b) for a, b in DIFFERENT)
    dt = (time.perf_counter() - t0) / (2 * (len(SAME) + len(DIFFERENT)))
    print(f"{name:24} same forms found {hits:3}/{len(SAME)}   different words merged "
          f"{false:3}/{len(DIFFERENT)}   {dt * 1e6:7.1f} µs/word (first call)")


def main() -> None:
    _score("dpassess.lint.stem", same_word)
    try:
        from Sastrawi.Stemmer.StemmerFactory import StemmerFactory  # type: ignore[import-not-found]
        t0 = time.perf_counter()
        sastrawi = StemmerFactory().create_stemmer()
        print(f"  (PySastrawi: dictionary loaded in {time.perf_counter() - t0:.2f} s)")

        def s_same(a: str, b: str) -> bool:
            return bool(sastrawi.stem(a) == sastrawi.stem(b))
        _score("PySastrawi", s_same)
    except ImportError:
        print("PySastrawi not installed")
    try:
        import snowballstemmer  # type: ignore[import-untyped]
        snow = snowballstemmer.stemmer("indonesian")

        def b_same(a: str, b: str) -> bool:
            return bool(snow.stemWord(a) == snow.stemWord(b))
        _score("snowball indonesian", b_same)
    except ImportError:
        print("snowballstemmer not installed")


if __name__ == "__main__":
    main()
