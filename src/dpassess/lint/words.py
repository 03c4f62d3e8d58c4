"""Word lists per language for the wording rules (English `en`, Indonesian `id`).

A language with no list here is skipped by the rules that need one (they say so in their docs).
Phrases are lower case; the rules match them on whole words after glossary terms are masked.
"""

from __future__ import annotations

#: Absolute terms: test-wise students learn that options with these are usually wrong.
ABSOLUTE: dict[str, tuple[str, ...]] = {
    "en": (
        "always", "never", "only", "all", "none", "nothing", "everything", "nobody",
        "completely", "entirely", "totally", "impossible", "guaranteed", "guarantees",
    ),
    "id": (
        "selalu", "tidak pernah", "tak pernah", "hanya", "semua", "seluruh", "segala",
        "sama sekali", "mustahil", "pasti", "satu-satunya", "senantiasa",
    ),
}

#: Absolute terms that cue "false" in a true/false statement: the list above without "only"
#: and "hanya", which state conditions ("only on a sorted list") as often as sweeping claims.
ABSOLUTE_STATEMENT: dict[str, tuple[str, ...]] = {
    lang: tuple(w for w in ws if w not in ("only", "hanya", "satu-satunya", "pasti"))
    for lang, ws in ABSOLUTE.items()
}

#: "All of the above" / "none of the above" and their Indonesian forms.
ALL_NONE: dict[str, tuple[str, ...]] = {
    "en": (
        "all of the above", "none of the above", "all the above", "all of these",
        "none of these", "both of the above", "all are correct", "none are correct",
        "none is correct", "all of the options", "none of the options",
    ),
    "id": (
        "semua jawaban benar", "semua jawaban di atas benar", "semua jawaban di atas",
        "semua di atas benar", "semua benar", "semua pilihan benar", "semua pilihan di atas",
        "tidak ada jawaban yang benar", "tidak ada yang benar", "tidak ada pilihan yang benar",
        "bukan salah satu di atas", "semua yang disebutkan di atas",
    ),
}

#: Negative words in a stem; they need emphasis (CAPITALS or bold).
NEGATIVE: dict[str, tuple[str, ...]] = {
    "en": ("not", "except", "least", "cannot", "isn't", "aren't", "doesn't", "don't", "won't"),
    "id": ("tidak", "kecuali", "bukan", "bukanlah", "tidaklah", "tak"),
}

#: Nouns that introduce a letter reference ("option C", "jawaban B") and the word for "and/or".
LETTER_NOUNS: dict[str, tuple[str, ...]] = {
    "en": ("option", "options", "answer", "answers", "choice", "choices", "alternative"),
    "id": ("opsi", "pilihan", "jawaban", "alternatif", "butir"),
}
AND_OR: dict[str, tuple[str, ...]] = {"en": ("and", "or"), "id": ("dan", "atau")}

#: Function words: not content words for the clang and shared-opening rules.
STOPWORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        """a an the of to in on at by for with from into onto over under about as and or but nor
        if then than so that this these those there here which what who whom whose when where why
        how is are was were be been being am do does did done has have had having it its it's
        they them their we us our you your he she his her i me my not no yes can could may might
        must shall should will would each every any some more most less least many much few one
        two own same other such only also just very too both either neither all via per across
        between among before after during while until since because although though whether up
        down out off again further once""".split()
    ),
    "id": frozenset(
        """yang dan di ke dari untuk dengan pada dalam oleh atau tetapi namun karena jika bila
        maka agar supaya sehingga ini itu tersebut adalah ialah merupakan akan sudah telah sedang
        masih belum tidak bukan juga pun saja hanya lebih paling sangat apa siapa mana manakah
        apakah bagaimana mengapa kapan berapa setiap tiap semua seluruh beberapa banyak sedikit
        suatu sebuah seorang satu dua para se sebagai secara antara antar terhadap tentang
        seperti bahwa hingga sampai setelah sebelum ketika saat selama oleh ada dapat bisa harus
        perlu boleh ia dia mereka kita kami kamu anda nya lain sama""".split()
    ),
}

#: English words starting with a vowel letter but a consonant sound ("a university") and the
#: reverse ("an hour"), for the a/an cue.
CONSONANT_SOUND = ("uni", "use", "usu", "uti", "eu", "one", "once", "ure")
VOWEL_SOUND = ("hour", "honest", "honor", "honour", "heir")
