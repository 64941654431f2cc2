#!/usr/bin/env python3
"""Writes scikit-learn's handwritten digits as the .npy fixtures the learning tests and
examples/train_digits.cpp load.

Usage (from the repository root; needs scikit-learn and NumPy, the fixtures are checked in
because CI has neither):

    python3 tests/data/make_digits_fixtures.py [output_dir]   # default: tests/data/digits

The data set ships inside scikit-learn (sklearn/datasets/data/digits.csv.gz: the UCI optical
recognition of handwritten digits test set, 1797 images of 8x8 pixels with values 0..16). The
files were made with scikit-learn 1.9.1 and NumPy 2.4.6:

  images.npy   uint8 (1797, 64)   the pixels, row by row (load_digits().data as integers)
  labels.npy   uint8 (1797,)      the digit each image shows (load_digits().target)
"""
import os
import sys

import numpy as np
from sklearn.datasets import load_digits


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "digits")
    os.makedirs(out, exist_ok=True)
    digits = load_digits()
    images = digits.data.astype(np.uint8)
    assert (images == digits.data).all() and images.shape == (1797, 64)
    labels = digits.target.astype(np.uint8)
    assert (labels == digits.target).all() and set(labels) == set(range(10))
    np.save(os.path.join(out, "images.npy"), images)
    np.save(os.path.join(out, "labels.npy"), labels)
    print(f"wrote {out}/images.npy {images.shape} and labels.npy {labels.shape}")


if __name__ == "__main__":
    main()
