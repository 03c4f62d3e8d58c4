"""Synthetic bilingual banks for the benchmarks: realistic lengths, every item type, deterministic.

    python benchmarks/synth.py OUT_DIR N [--salad]   # writes OUT_DIR/bank.yaml and N item files

Two styles. The default, `real`, writes parallel Indonesian/English sentences from templates
(stems with three numbers each, so no two stems are one word apart; options of similar length
from a pool of plausible remedies; the seed bank's glossary): a typical item lints clean, as in a
reviewed bank. `salad` writes random words of the right lengths: about two findings per item
(wrong language, stem word in the key, key longest), a bank full of problems.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import yaml

ID_WORDS = (
    "setiap gradien model data pelatihan replika memori komunikasi sinkronisasi langkah "
    "parameter bobot perangkat jaringan ukuran proses hasil akhir menggunakan dengan untuk "
    "yang pada dalam dari antara lebih cepat lambat besar kecil bagian"
).split()
EN_WORDS = (
    "each gradient model data training replica memory communication synchronization step "
    "parameter weight device network size process result final using with for that on in "
    "from between more faster slower larger smaller part"
).split()
TOPICS = [f"topic-{t}/sub-{s}" for t in range(8) for s in range(3)]


def sentence(rng: random.Random, words: list[str], lo: int, hi: int) -> str:
    n = rng.randint(lo, hi)
    s = " ".join(rng.choice(words) for _ in range(n))
    return s[0].upper() + s[1:]


# (en, id) stem templates; {a} {b} {c} are numbers (c depends on both a and b).
STEMS = [
    ("A team trains a network on {a} GPUs, and each epoch takes {b} minutes at {c} samples per "
     "second. Which change is most likely to shorten each epoch?",
     "Sebuah tim melatih jaringan pada {a} GPU, dan setiap epoch memakan waktu {b} menit dengan {c} "
     "sampel per detik. Perubahan mana yang paling mungkin mempersingkat setiap epoch?"),
    ("After a job was scaled to {a} GPUs, its throughput rose from {b} to just {c} samples per "
     "second. Which step should the team try first?",
     "Setelah sebuah job diperbesar menjadi {a} GPU, throughput naik dari {b} menjadi {c} sampel "
     "per detik saja. Langkah mana yang sebaiknya dicoba lebih dulu oleh tim itu?"),
    ("A cluster of {a} nodes runs data-parallel training with a global batch of {c} and {b} "
     "GPUs per node. What would most help the training speed?",
     "Sebuah klaster berisi {a} node menjalankan pelatihan paralel data dengan batch global {c} "
     "dan {b} GPU per node. Apa yang paling membantu kecepatan pelatihan?"),
    ("Profiling shows that {b} milliseconds of each step of {c} milliseconds on {a} GPUs are spent "
     "waiting. Which remedy fits this profile best?",
     "Profiling menunjukkan bahwa {b} milidetik dari setiap langkah selama {c} milidetik pada {a} "
     "GPU habis untuk menunggu. Solusi mana yang paling cocok dengan profil ini?"),
]
TF_STEM = (
    "With {a} GPUs and a per-GPU batch of {b} samples, the global batch holds {c} samples.",
    "Dengan {a} GPU dan batch per GPU sebesar {b} sampel, batch global berisi {c} sampel.",
)
# (en, id) options of similar length: plausible remedies, no absolute terms.
OPTIONS = [
    ("Overlap gradient communication with the backward pass",
     "Tumpuk komunikasi gradien dengan backward pass"),
    ("Increase the batch size on each GPU", "Perbesar ukuran batch pada setiap GPU"),
    ("Use a faster interconnect between the nodes", "Gunakan interkoneksi yang lebih cepat antarnode"),
    ("Reduce the precision of the stored weights", "Turunkan presisi bobot yang disimpan"),
    ("Accumulate gradients over several microbatches",
     "Akumulasikan gradien selama beberapa microbatch"),
    ("Split the optimizer state across the workers", "Bagi state optimizer di antara para worker"),
    ("Move the data loading to background processes",
     "Pindahkan pemuatan data ke proses latar belakang"),
    ("Raise the learning rate in proportion to the batch",
     "Naikkan learning rate sebanding dengan ukuran batch"),
    ("Compress the gradients before they are exchanged", "Kompres gradien sebelum dipertukarkan"),
    ("Pin the host memory used by the data loader", "Pakai memori host tersemat untuk pemuat data"),
    ("Write checkpoints to disk less frequently", "Tulis checkpoint ke disk dengan lebih jarang"),
    ("Place each replica on a separate node", "Tempatkan setiap replika pada node terpisah"),
    ("Replace the ring all-reduce with a tree all-reduce",
     "Ganti ring all-reduce dengan tree all-reduce"),
    ("Keep a full set of weights on each GPU", "Simpan satu set bobot lengkap di setiap GPU"),
    ("Synchronize the random seed across the processes",
     "Samakan random seed di antara para proses"),
    ("Add more GPUs as the dataset grows", "Tambah GPU seiring bertambahnya dataset"),
]
FEEDBACK = (
    ("Correct. {o} removes the main bottleneck of this setup.",
     "Benar. {o} menghilangkan hambatan utama pada konfigurasi ini."),
    ("Incorrect. {o} leaves the main bottleneck of this setup in place.",
     "Salah. {o} membiarkan hambatan utama pada konfigurasi ini tetap ada."),
)
EXPLANATION = (
    "The slowest part of each step decides how long an epoch takes. On {a} GPUs the gradient "
    "exchange grows with the number of replicas, so a remedy has to shorten that part or hide "
    "it behind the computation.",
    "Bagian paling lambat dari setiap langkah menentukan lama satu epoch. Pada {a} GPU, "
    "pertukaran gradien bertambah seiring jumlah replika, sehingga solusi harus memperpendek "
    "bagian itu atau menyembunyikannya di balik komputasi.",
)
TF_FEEDBACK = (
    ("Correct. The global batch is the per-GPU batch times the number of GPUs.",
     "Benar. Batch global adalah batch per GPU dikalikan dengan jumlah GPU."),
    ("Incorrect. The global batch is the per-GPU batch times the number of GPUs.",
     "Salah. Batch global adalah batch per GPU dikalikan dengan jumlah GPU."),
)


def _lower_first(s: str) -> str:
    return s[0].lower() + s[1:]


def real_item_data(n: int, rng: random.Random) -> dict:
    """One item in the `real` style: parallel sentences that lint clean."""
    kind = ("single_choice", "single_choice", "multiple_response", "true_false")[n % 4]
    # Disjoint ranges per role (a < 302 <= b < 1000 <= c), c unique: no two stems one word apart.
    a, b = 2 + n % 300, 400 + n // 300
    text: dict[str, dict] = {"id": {}, "en": {}}
    if kind == "true_false":
        c = a * b if rng.random() < 0.5 else a * b + 1
        opts = ["true", "false"]
        key: list[str] | str = "true" if c == a * b else "false"
        for i, lang in enumerate(("en", "id")):
            text[lang] = {
                "title": ("Global batch on {a} GPUs", "Batch global pada {a} GPU")[i].format(a=a),
                "stem": TF_STEM[i].format(a=a, b=b, c=c),
                "options": {},
                "feedback": {o: TF_FEEDBACK[(o == "true") != (key == "true")][i] for o in opts},
                "explanation": EXPLANATION[i].format(a=a),
            }
    else:
        stem = STEMS[n % len(STEMS)]
        picks = rng.sample(range(len(OPTIONS)), 4)
        opts = [f"opt-{j}" for j in range(4)]
        key = rng.sample(opts, 2) if kind == "multiple_response" else rng.choice(opts)
        keys = set(key) if isinstance(key, list) else {key}
        for i, lang in enumerate(("en", "id")):
            text[lang] = {
                "title": ("Speeding up training on {a} GPUs",
                          "Mempercepat pelatihan pada {a} GPU")[i].format(a=a),
                "stem": stem[i].format(a=a, b=b, c=1000 + n),
                "options": {o: OPTIONS[k][i] for o, k in zip(opts, picks, strict=True)},
                "feedback": {
                    o: FEEDBACK[o not in keys][i].format(o=OPTIONS[k][i])
                    for o, k in zip(opts, picks, strict=True)
                },
                "explanation": EXPLANATION[i].format(a=a),
            }
    return record(n, kind, opts, key, {"id": text["id"], "en": text["en"]}, bloom="apply")


def record(n: int, kind: str, opts: list[str], key: list[str] | str, text: dict,
           *, bloom: str) -> dict:
    """The item file's data around its text (true/false items leave their options implied)."""
    data = {
        "schema": 1,
        "id": f"item-{n:06d}",
        "type": kind,
        "topic": TOPICS[n % len(TOPICS)],
        "difficulty": ("easy", "medium", "hard")[n % 3],
        "bloom": bloom,
        "points": 1,
        "tags": ["synthetic", f"t{n % 10}"],
        "status": "reviewed",
        "options": opts,
        "key": key,
        "text": text,
    }
    if kind == "true_false":
        del data["options"]
    return data


def item_data(n: int, rng: random.Random, style: str = "real") -> dict:
    if style == "real":
        return real_item_data(n, rng)
    return salad_item_data(n, rng)


def salad_item_data(n: int, rng: random.Random) -> dict:
    kind = ("single_choice", "single_choice", "multiple_response", "true_false")[n % 4]
    if kind == "true_false":
        opts = ["true", "false"]
        key: list[str] | str = rng.choice(opts)
    else:
        opts = [f"opt-{j}" for j in range(4)]
        key = rng.sample(opts, 2) if kind == "multiple_response" else rng.choice(opts)
    text = {}
    for lang, words in (("id", ID_WORDS), ("en", EN_WORDS)):
        block = {
            "title": sentence(rng, words, 3, 6),
            "stem": sentence(rng, words, 12, 30) + "?",
            "options": {} if kind == "true_false" else {o: sentence(rng, words, 4, 12) for o in opts},
            "feedback": {o: sentence(rng, words, 8, 20) + "." for o in opts},
            "explanation": sentence(rng, words, 20, 45) + ".",
        }
        text[lang] = block
    return record(n, kind, opts, key, text, bloom="understand")


SEED_BANK = Path(__file__).resolve().parent.parent / "items" / "data-parallelism" / "bank.yaml"


def write(out: Path, n_items: int, seed: int = 1, style: str = "real") -> Path:
    """Write a bank of `n_items` items in `style` (`real` or `salad`) to folder `out`."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    bank = {
        "schema": 1,
        "id": "synthetic",
        "title": {"id": "Bank sintetis", "en": "Synthetic bank"},
        "languages": ["id", "en"],
        "default_language": "id",
        "glossary_language": "en",
        "glossary": yaml.safe_load(SEED_BANK.read_text(encoding="utf-8"))["glossary"],
    }
    (out / "bank.yaml").write_text(yaml.safe_dump(bank, allow_unicode=True), encoding="utf-8")
    header = "# yaml-language-server: $schema=../../docs/schema/item.schema.json\n"
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    for n in range(n_items):
        body = yaml.dump(item_data(n, rng, style), Dumper=dumper, sort_keys=False, allow_unicode=True)
        (out / f"item-{n:06d}.yaml").write_text(header + body, encoding="utf-8")
    return out


if __name__ == "__main__":
    write(Path(sys.argv[1]), int(sys.argv[2]), style="salad" if "--salad" in sys.argv else "real")
