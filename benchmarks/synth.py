"""Synthetic bilingual banks for the benchmarks: realistic lengths, every item type, deterministic.

    python benchmarks/synth.py OUT_DIR N     # writes OUT_DIR/bank.yaml and N item files
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


def item_data(n: int, rng: random.Random) -> dict:
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
    data = {
        "schema": 1,
        "id": f"item-{n:06d}",
        "type": kind,
        "topic": TOPICS[n % len(TOPICS)],
        "difficulty": ("easy", "medium", "hard")[n % 3],
        "bloom": "understand",
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


def write(out: Path, n_items: int, seed: int = 1) -> Path:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    bank = {
        "schema": 1,
        "id": "synthetic",
        "title": {"id": "Bank sintetis", "en": "Synthetic bank"},
        "languages": ["id", "en"],
        "default_language": "id",
    }
    (out / "bank.yaml").write_text(yaml.safe_dump(bank), encoding="utf-8")
    header = "# yaml-language-server: $schema=../../docs/schema/item.schema.json\n"
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    for n in range(n_items):
        body = yaml.dump(item_data(n, rng), Dumper=dumper, sort_keys=False, allow_unicode=True)
        (out / f"item-{n:06d}.yaml").write_text(header + body, encoding="utf-8")
    return out


if __name__ == "__main__":
    write(Path(sys.argv[1]), int(sys.argv[2]))
