#!/usr/bin/env python3
"""bench_vsa's rows in HoloVec (NumPy backend) and torchhd (PyTorch, CPU), one thread, d = 10000,
beside fusor's medians from bench_vsa's JSON: prints each peer's median time, the ratio fusor/peer
(< 1: fusor is faster) and peer/fusor (fusor's speed-up). Peers that do not import are skipped with a
note. Usage: vsa_peers.py BENCH_VSA_JSON [holovec|torchhd]   (default: every peer that imports)

The rows, fusor_vsa_<op>/<model> for the models fhrr, map (bipolar), bsc and hrr (both peers) and vtb
(d = 100 x 100), mcr and cgr (q = 16) and bsbc (10000 blocks of 64) (torchhd; HoloVec has none of
them: its "VTB" is another binding), and ghrr (1111 blocks of 3 x 3 complex, HoloVec's default
matrix size; torchhd has no GHRR), bsdc (density 1/sqrt(d), XOR-bound; HoloVec only) and mbat (HoloVec's
"VTB", softmax-weighted shifts with K = 4; HoloVec only):
  random:     one random hypervector            bind:      bind two hypervectors
  bundle100:  bundle 100 hypervectors (a (100, d) batch) into one, with the peer's own bundle
  sim1000:    the 1000 similarities of a (1000, d) batch against one vector (the peer's similarity)
  search1:    1 query against a 1000-item codebook -> 1000 similarities
  search1000: 1000 queries against a 1000-item codebook -> (1000, 1000) similarities
The encoders (fusor's rows fusor_vsa_<op>/<model>):
  fpe1000:    fractional power encoding (sinc kernel, bandwidth 4) of 1000 scalars in [0, 1], FHRR and HRR
  fpe1e6:     the same for 10^6 scalars at d = 128
  level1000:  1000 values in [0, 1] through a 100-level MAP codebook (HoloVec LevelEncoder, torchhd Level)
  thermometer1000: the same through a 100-level BSC thermometer (HoloVec ThermometerEncoder, torchhd Thermometer)
  ngrams:     trigrams of a sequence of 100 MAP vectors, bundled (torchhd.ngrams; HoloVec NGramEncoder)
  digits_encode: the 1797 digits (8x8, values 0..16) as records: each pixel's level bound to its position's key,
              bundled (fusor: scalar_encoder::encode_record; torchhd: hash_table of Level embeddings in blocks of 64)
  digits_train: a centroid classifier's one-pass fit and one OnlineHD pass (torchhd Centroid.add, add_online)
  digits_predict: the class of each of the 1797 records (torchhd Centroid, cosine)
  sdm_write, sdm_read: a sparse distributed memory of 20 000 MAP locations at d = 1000, about 1% active:
              1000 pairs written, 1000 addresses read (torchhd memory.SparseDistributed, p = 0.01; HoloVec has none)
Each row times the peer's idiomatic call on inputs made outside the timed region; where a peer offers
no batched call, the Python loop it offers is timed and the row says so."""
import json
import os
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one thread, as fusor's rows

from timing import median_seconds as timed  # noqa: E402

D, BUNDLE, ROWS = 10000, 100, 1000
MODELS = ("fhrr", "map", "bsc", "hrr")
TORCHHD_ONLY = {"vtb": ("VTB", {}), "mcr": ("MCR", {"block_size": 16}), "cgr": ("CGR", {"block_size": 16}),
                "bsbc": ("BSBC", {"block_size": 64})}
CHUNK = 4  # queries per call where torchhd's modular similarity broadcasts (Q, N, d) int64 tensors
OPS = ("random", "bind", "bundle100", "sim1000", "search1", "search1000", "fpe1000", "fpe1e6", "level1000",
       "thermometer1000", "ngrams", "digits_encode", "digits_train", "digits_predict", "sdm_write", "sdm_read")
DIGITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data", "digits")
ENCODE_ROWS = {"fpe1000": (1000, D), "fpe1e6": (1_000_000, 128)}  # (scalars, dimension)
# HoloVec's models: key -> (VSA.create name, dimension, notes on the rows). The default spaces: FHRR
# complex64 phasors, MAP bipolar float32 (+-1), BSC int32 {0, 1}, HRR float32, BSDC int32 {0, 1} of
# density 1/sqrt(d), GHRR complex64 blocks of 3 x 3 (its dimension counts blocks: 1111 of 9).
HAMMING = "; cosine, not the model's Hamming similarity"
HOLOVEC = {
    "fhrr": ("FHRR", D, {"bind": " (re-normalises to |z| = 1)", "bundle100": "(sum, to |z| = 1)"}),
    "map": ("MAP", D, {"bundle100": "(sign of the sum)", "search": HAMMING}),
    "bsc": ("BSC", D, {"bundle100": "(sum >= n/2)", "search": HAMMING}),
    "hrr": ("HRR", D, {"bundle100": "(plain sum)"}),
    "bsdc": ("BSDC", D, {"bind": " (XOR)", "bundle100": "(counts, the top p d kept by np.partition)",
                         "search": "; cosine, not the model's overlap coefficient"}),
    "ghrr": ("GHRR", D // 9, {"random": " (a Python loop of per-block QRs)",
                              "bind": " (batched np.matmul of the blocks)",
                              "bundle100": "(sum, polar factor by batched SVD)"}),
    "mbat": ("VTB", D, {"bind": " (its 'VTB': 4 projections, softmax, 4 np.roll, normalise)",
                        "bundle100": "(sum, to unit norm)"}),
}


def median_seconds(fn):
    t0 = time.perf_counter()
    fn()  # the warm-up call, timed to size the repetitions
    if time.perf_counter() - t0 > 1.0:  # the Python loops over 1000 x 1000 pairs: seconds a call
        return timed(fn, reps=3, warmup=0)
    return timed(fn, reps=15, warmup=1)


def fusor_times(path):
    med = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") == "median":
            head, _, rest = b["run_name"].partition("/")
            med[(head, rest.split("/")[0])] = b["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}.get(
                b.get("time_unit", "ns"), 1e-9)
    return med


def holovec_peer():
    import numpy as np
    import holovec
    from holovec import VSA
    from holovec.retrieval import ItemStore

    out = {}
    for m, (name, dim, notes) in HOLOVEC.items():
        model = VSA.create(name, dim=dim, backend="numpy", seed=1)
        a, b = model.random(), model.random()
        batch = [model.random() for _ in range(BUNDLE)]
        rows = [model.random() for _ in range(ROWS)]
        queries = [model.random() for _ in range(ROWS)]
        store = ItemStore(model).fit({str(i): v for i, v in enumerate(rows)})
        out[("random", m)] = (median_seconds(model.random), "model.random()" + notes.get("random", ""))
        out[("bind", m)] = (median_seconds(lambda: model.bind(a, b)), "model.bind" + notes.get("bind", ""))
        out[("bundle100", m)] = (median_seconds(lambda: model.bundle(batch)),
                                 f"model.bundle(list of {BUNDLE}) " + notes["bundle100"])
        out[("sim1000", m)] = (median_seconds(lambda: [model.similarity(a, r) for r in rows]),
                               "Python loop of model.similarity (HoloVec has no batched similarity)")
        how = "ItemStore.query(q, k=1000) (matrix-vector; restacks the codebook each query"
        out[("search1", m)] = (median_seconds(lambda: store.query(a, k=ROWS)), how + notes.get("search", "") + ")")
        # 1000 queries take seconds to minutes in this loop: time the first n, scaled to 1000
        n = max([10] + [k for k in (20, 50, 100, 200, 500, ROWS) if k * out[("search1", m)][0] < 2.0])
        how = "Python loop of ItemStore.query (no multi-query call)"
        how += f"; {n} of the {ROWS} queries timed, x {ROWS // n}" if n < ROWS else ""
        out[("search1000", m)] = (median_seconds(lambda: [store.query(q, k=ROWS) for q in queries[:n]]) * ROWS / n,
                                  how)
    out.update(holovec_encoders(np))
    return f"HoloVec {holovec.__version__} (NumPy {np.__version__} backend)", out


def scaled_loop(encode, values):
    """A Python loop of one-value encode calls over `values`: the first n timed (n grows while a call
    stays under two seconds), scaled to all of them, and the note saying so."""
    n = 100
    while n < len(values) and median_seconds(lambda: [encode(v) for v in values[:n]]) * 10 < 2.0:
        n *= 10
    n = min(n, len(values))
    t = median_seconds(lambda: [encode(v) for v in values[:n]]) * len(values) / n
    return t, "" if n == len(values) else f"; {n} of the {len(values)} values timed, x {len(values) / n:.3g}"


def holovec_encoders(np):
    from holovec import VSA
    from holovec.encoders import FractionalPowerEncoder, LevelEncoder, ThermometerEncoder

    out = {}
    for row, (n, dim) in ENCODE_ROWS.items():
        values = [float(v) for v in np.linspace(0.0, 1.0, n)]
        for m in ("fhrr", "hrr"):
            model = VSA.create(m.upper(), dim=dim, backend="numpy", seed=1)
            enc = FractionalPowerEncoder(model, 0.0, 1.0, bandwidth=4.0, seed=1)
            t, note = scaled_loop(enc.encode, values)
            out[(row, m)] = (t, "Python loop of FractionalPowerEncoder.encode (no batched call)" + note)
    values = [float(v) for v in np.linspace(0.0, 1.0, ROWS)]
    model = VSA.create("MAP", dim=D, backend="numpy", seed=1)
    enc = LevelEncoder(model, 0.0, 1.0, 100, seed=1)
    out[("level1000", "map")] = (scaled_loop(enc.encode, values)[0], "Python loop of LevelEncoder.encode")
    model = VSA.create("BSC", dim=D, backend="numpy", seed=1)
    enc = ThermometerEncoder(model, 0.0, 1.0, 100, seed=1)
    out[("thermometer1000", "bsc")] = (scaled_loop(enc.encode, values)[0],
                                       "Python loop of ThermometerEncoder.encode (its thermometer bundles bin vectors)")
    from holovec.encoders import NGramEncoder
    model = VSA.create("MAP", dim=D, backend="numpy", seed=1)
    ngram = NGramEncoder(model, n=3, stride=1, mode="bundling", seed=1)
    sequence = [i % 26 for i in range(100)]
    out[("ngrams", "map")] = (median_seconds(lambda: ngram.encode(sequence)), "NGramEncoder(n=3).encode")
    images = np.load(os.path.join(DIGITS, "images.npy")).astype(float)
    levels = LevelEncoder(model, 0.0, 16.0, 17, seed=1)
    keys = [model.random() for _ in range(64)]
    encode_image = lambda img: model.bundle([model.bind(k, levels.encode(v)) for k, v in zip(keys, img)])
    t, note = scaled_loop(encode_image, list(images))
    out[("digits_encode", "map")] = (t, "Python loop of bundle(bind(key, LevelEncoder.encode(pixel)) for 64 pixels)" + note)
    return out


def torchhd_peer():
    import torch
    import torchhd
    torch.set_num_threads(1)
    torch.manual_seed(1)
    out = {}
    for m in MODELS:
        vsa = m.upper()
        a, b = torchhd.random(2, D, vsa)
        batch = torchhd.random(BUNDLE, D, vsa)
        rows = torchhd.random(ROWS, D, vsa)
        queries = torchhd.random(ROWS, D, vsa)
        out[("random", m)] = (median_seconds(lambda: torchhd.random(1, D, vsa)), f"torchhd.random(1, d, '{vsa}')")
        out[("bind", m)] = (median_seconds(lambda: torchhd.bind(a, b)), "torchhd.bind")
        out[("bundle100", m)] = (median_seconds(lambda: torchhd.multiset(batch)), "torchhd.multiset " + {
            "fhrr": "(complex sum)", "map": "(sum, not signed)",
            "bsc": "(majority, random tie-break)", "hrr": "(sum)"}[m])
        sim = "torchhd.cosine_similarity" + (" (bipolar dot / d = 1 - 2h/d)" if m == "bsc" else "")
        out[("sim1000", m)] = (median_seconds(lambda: torchhd.cosine_similarity(a, rows)), sim)
        out[("search1", m)] = (median_seconds(lambda: torchhd.cosine_similarity(a, rows)), sim)
        out[("search1000", m)] = (median_seconds(lambda: torchhd.cosine_similarity(queries, rows)), sim)
    for m, (vsa, kw) in TORCHHD_ONLY.items():
        a, b = torchhd.random(2, D, vsa, **kw)
        batch = torchhd.random(BUNDLE, D, vsa, **kw)
        rows = torchhd.random(ROWS, D, vsa, **kw)
        queries = torchhd.random(ROWS, D, vsa, **kw)
        args = ", ".join(f"{k}={v}" for k, v in kw.items())
        out[("random", m)] = (median_seconds(lambda: torchhd.random(1, D, vsa, **kw)),
                              f"torchhd.random(1, d, '{vsa}'{', ' + args if args else ''}) (int64)" if kw else
                              f"torchhd.random(1, d, '{vsa}')")
        out[("bind", m)] = (median_seconds(lambda: torchhd.bind(a, b)), "torchhd.bind")
        out[("bundle100", m)] = (median_seconds(lambda: torchhd.multiset(batch)), "torchhd.multiset " + {
            "vtb": "(sum)", "mcr": "(phasor sum, rounded angle)", "cgr": "(torch.mode)", "bsbc": "(torch.mode)"}[m])
        sim = "torchhd.cosine_similarity"
        out[("sim1000", m)] = (median_seconds(lambda: torchhd.cosine_similarity(a, rows)), sim)
        out[("search1", m)] = (median_seconds(lambda: torchhd.cosine_similarity(a, rows)), sim)
        if m == "vtb":
            out[("search1000", m)] = (median_seconds(lambda: torchhd.cosine_similarity(queries, rows)), sim)
        else:  # (1000, 1000, d) int64 temporaries would take 80 GB: CHUNK queries a call, scaled
            out[("search1000", m)] = (
                median_seconds(lambda: torchhd.cosine_similarity(queries[:CHUNK], rows)) * ROWS / CHUNK,
                f"{sim} of {CHUNK} queries at a time (it broadcasts (Q, N, d) int64), x {ROWS // CHUNK}")
    for op in ("sim1000", "search1"):  # BSC's count of equal bits, torchhd.hamming_similarity
        a, rows = torchhd.random(1, D, "BSC")[0], torchhd.random(ROWS, D, "BSC")
        out[(op, "bsc:hamming")] = (median_seconds(lambda: torchhd.hamming_similarity(a, rows)),
                                    "torchhd.hamming_similarity (d - h)")
    out[("search1000", "bsc:hamming")] = (None, "torchhd.hamming_similarity broadcasts a (1000, 1000, d) "
                                                "bool tensor (10 GB)")
    out.update(torchhd_encoders(torch, torchhd))
    return f"torchhd {torchhd.__version__} (PyTorch {torch.__version__}, CPU)", out


def torchhd_encoders(torch, torchhd):
    out = {}
    torch.set_grad_enabled(False)  # inference: the embeddings' weights need no graph
    for row, (n, dim) in ENCODE_ROWS.items():
        x = torch.linspace(0.0, 1.0, n).view(-1, 1)
        for m in ("fhrr", "hrr"):
            enc = torchhd.embeddings.FractionalPower(1, dim, "sinc", 4.0, m.upper())
            out[(row, m)] = (median_seconds(lambda: enc(x)), f"embeddings.FractionalPower(1, {dim}, 'sinc', 4.0, '{m.upper()}')")
    x = torch.linspace(0.0, 1.0, ROWS)
    enc = torchhd.embeddings.Level(100, D, "MAP", low=0.0, high=1.0)
    out[("level1000", "map")] = (median_seconds(lambda: enc(x)), "embeddings.Level(100, d, 'MAP')")
    enc = torchhd.embeddings.Thermometer(100, D, "BSC", low=0.0, high=1.0)
    out[("thermometer1000", "bsc")] = (median_seconds(lambda: enc(x)), "embeddings.Thermometer(100, d, 'BSC')")
    seq = torchhd.random(100, D, "MAP")
    out[("ngrams", "map")] = (median_seconds(lambda: torchhd.ngrams(seq, 3)), "torchhd.ngrams(x, 3)")
    import numpy as np
    images = torch.from_numpy(np.load(os.path.join(DIGITS, "images.npy")).astype(np.float32))
    labels = torch.from_numpy(np.load(os.path.join(DIGITS, "labels.npy")).astype(np.int64))
    keys = torchhd.random(64, D, "MAP")
    level = torchhd.embeddings.Level(17, D, "MAP", low=0.0, high=16.0)

    def encode():  # blocks of 64 images: the (64, 64, d) bound pixels take 164 MB
        return torch.cat([torchhd.hash_table(keys, level(images[b:b + 64])).sign() for b in range(0, len(images), 64)])

    out[("digits_encode", "map")] = (median_seconds(encode), "hash_table(keys, Level(17, d)(x)).sign(), 64 images a call")
    h = encode()

    def train():
        model = torchhd.models.Centroid(D, 10)
        model.add(h, labels)
        model.add_online(h, labels)

    out[("digits_train", "map")] = (median_seconds(train), "models.Centroid: add, then add_online")
    model = torchhd.models.Centroid(D, 10)
    model.add(h, labels)
    out[("digits_predict", "map")] = (median_seconds(lambda: model(h).argmax(1)), "models.Centroid(x) (cosine), argmax")
    keys, values = torchhd.random(1000, 1000, "MAP"), torchhd.random(1000, 1000, "MAP")

    def sdm_write():
        sdm = torchhd.memory.SparseDistributed(20000, 1000, 1000, p=0.01)
        sdm.write(keys, values)

    sdm = torchhd.memory.SparseDistributed(20000, 1000, 1000, p=0.01)
    construct = median_seconds(lambda: torchhd.memory.SparseDistributed(20000, 1000, 1000, p=0.01))
    out[("sdm_write", "map")] = (max(median_seconds(sdm_write) - construct, 0.0),
                                 "memory.SparseDistributed(20000, 1000, 1000, p=0.01).write (its construction subtracted)")
    sdm.write(keys, values)
    out[("sdm_read", "map")] = (median_seconds(lambda: sdm.read(keys)), "memory.SparseDistributed.read")
    return out


def fmt(t):
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if t >= scale:
            return f"{t / scale:8.3f}{unit:>2}"
    return f"{t / 1e-9:8.1f}ns"


def main():
    only = sys.argv[2] if len(sys.argv) > 2 else None
    if len(sys.argv) < 2 or only not in (None, "holovec", "torchhd"):
        sys.exit(__doc__)
    fusor = fusor_times(sys.argv[1])
    for key, fn in (("holovec", holovec_peer), ("torchhd", torchhd_peer)):
        if only not in (None, key):
            continue
        try:
            label, times = fn()
        except ImportError as e:
            print(f"({key} not installed: {e}; scripts/bench vsa installs HoloVec into build/peers-vsa-venv "
                  f"and torchhd into build/peers-torch-venv)")
            continue
        peer = label.split()[0]
        print(f"{label}, one thread, d = {D}: fusor/{peer} < 1 when fusor is faster; {peer}/fusor is fusor's speed-up")
        print(f"{'row':24} {'fusor':>10} {peer:>10} {'fusor/' + peer:>14} {peer + '/fusor':>14}  call")
        variants = [v for _, v in times]
        for op in OPS:
            for m in dict.fromkeys(variants):
                if (op, m) not in times:
                    continue
                tp, how = times[(op, m)]
                tf = fusor.get((f"fusor_vsa_{op}", m.split(":")[0]))
                row = f"{op + '/' + m:24} {fmt(tf) if tf else '-':>10} "
                if tp is None:
                    row += f"{'n/a':>10} {'-':>14} {'-':>14}"
                elif tf:
                    row += f"{fmt(tp)} {tf / tp:14.3f} {tp / tf:14.2f}"
                else:
                    row += f"{fmt(tp)} {'-':>14} {'-':>14}"
                print(f"{row}  {how}")
        print()


if __name__ == "__main__":
    main()
