#!/usr/bin/env python3
"""Writes a fixed sample of the word lists of Debian's wamerican, wngerman, wfrench, wspanish and
witalian packages as the .npy fixtures of the language-identification test and
examples/vsa_language.cpp.

Usage (from the repository root; needs NumPy and the five packages, the fixtures are checked in
because CI has neither):

    apt-get install wamerican wngerman wfrench wspanish witalian
    python3 tests/data/make_language_fixtures.py [output_dir]   # default: tests/data/language

Each list is read as UTF-8 and lowercased (German nouns' capitals would give the language away).
A word is kept when it has 3 to 16 letters (Python's str.isalpha: no apostrophes, hyphens or
digits) and, after lowercasing, occurs in no other of the five lists (about 1% of the words,
names and loan words such as "radio", whose label would be arbitrary). WORDS words per language
are then drawn without replacement by random.Random(SEED), in the lists' sorted order, so the same
packages give the same files. The files were made from wamerican 2020.12.07-2,
wngerman 20161207-11, wfrench 1.2.7-2, wspanish 1.0.30 and witalian 1.10 with NumPy 2.4.6:

  words.npy      uint8 (5 * WORDS, 16)  the letters of each word as codes 1..A (the alphabet's
                                        order), padded with 0
  labels.npy     uint8 (5 * WORDS,)     the word's language: 0 english, 1 german, 2 french,
                                        3 spanish, 4 italian (words grouped by language)
  alphabet.txt   the A letters in code order, one line, UTF-8
"""
import os
import random
import sys

import numpy as np

LISTS = [("english", "american-english"), ("german", "ngerman"), ("french", "french"),
         ("spanish", "spanish"), ("italian", "italian")]
WORDS = 1000
MAX_LETTERS = 16
SEED = 2026


def read(name):
    path = os.path.join("/usr/share/dict", name)
    if not os.path.exists(path):
        sys.exit(f"{path} is missing: apt-get install wamerican wngerman wfrench wspanish witalian")
    with open(path, encoding="utf-8") as f:
        words = {line.strip().lower() for line in f}
    return {w for w in words if 3 <= len(w) <= MAX_LETTERS and w.isalpha()}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "language")
    os.makedirs(out, exist_ok=True)
    lists = [read(file) for _, file in LISTS]
    seen = {}
    for words in lists:
        for w in words:
            seen[w] = seen.get(w, 0) + 1
    rng = random.Random(SEED)
    samples = [rng.sample(sorted(w for w in words if seen[w] == 1), WORDS) for words in lists]
    alphabet = sorted({c for sample in samples for w in sample for c in w})
    code = {c: i + 1 for i, c in enumerate(alphabet)}
    words = np.zeros((len(LISTS) * WORDS, MAX_LETTERS), dtype=np.uint8)
    labels = np.repeat(np.arange(len(LISTS), dtype=np.uint8), WORDS)
    for lang, sample in enumerate(samples):
        for i, w in enumerate(sample):
            words[lang * WORDS + i, :len(w)] = [code[c] for c in w]
    assert len(alphabet) < 256
    np.save(os.path.join(out, "words.npy"), words)
    np.save(os.path.join(out, "labels.npy"), labels)
    with open(os.path.join(out, "alphabet.txt"), "w", encoding="utf-8") as f:
        f.write("".join(alphabet) + "\n")
    print(f"wrote {out}/words.npy {words.shape}, labels.npy {labels.shape} and alphabet.txt "
          f"({len(alphabet)} letters)")


if __name__ == "__main__":
    main()
