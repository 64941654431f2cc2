#!/usr/bin/env python3
"""Prints each fusor benchmark beside its baseline from one Google Benchmark JSON file (medians):
the times, and fusor's time divided by the baseline's (1.00 = no overhead, < 1 = faster)."""
import json
import sys

PAIRS = [  # (fusor benchmark, baseline benchmark); the rest of the name (arguments) must match
    ("transpose_copy", "hand_transpose"), ("transpose_copy", "stream_copy"), ("roll_2d", "hand_roll_alloc"), ("roll_2d", "stream_copy"),
    ("fusor_sort", "std_sort"), ("fusor_sort", "std_stable_sort"), ("fusor_argsort", "std_argsort"),
    ("fusor_topk", "std_partial_sort_topk"),
    ("fusor_median", "std_nth_element_median"), ("fusor_median", "std_sort_median"),
    ("std_nth_element_median", "std_sort_median"), ("fusor_percentiles", "std_nth_element_percentiles"),
    ("fusor_partition", "std_nth_element"),
    ("fusor_solve", "lapack_solve"), ("fusor_svd", "lapack_svd"), ("fusor_eigh", "lapack_eigh"),
    ("fusor_matmul", "cblas_gemm"), ("fusor_matmul_out", "cblas_gemm"),
    ("save_npy", "raw_fwrite"), ("load_npy", "raw_fread"), ("load_npy", "raw_fread_alloc"),
    ("fusor_rfft_roundtrip", "fftw_roundtrip"), ("fusor_rfft_roundtrip", "fftw_malloc_roundtrip"),
    ("fusor_rfft_roundtrip_norm", "fftw_roundtrip_norm"),
    ("fusor_fftconvolve", "fftw_fftconvolve"),
]
for t in ("float", "double"):  # autodiff (bench_ad): beside the hand-written derivative and the primal
    PAIRS += [(f"fusor_jvp_sinexp<{t}>", f"hand_jvp_sinexp<{t}>"), (f"fusor_jvp_sinexp<{t}>", f"fusor_primal_sinexp<{t}>"),
              (f"fusor_jacfwd_tanh<{t}>", f"hand_jacobian_tanh<{t}>"), (f"fusor_jacrev_tanh<{t}>", f"hand_jacobian_tanh<{t}>")]
    PAIRS += [(f"fusor_vg_{f}<{t}>", f"hand_vg_{f}<{t}>") for f in ("square", "sinexp", "rosen", "dense", "conv")]
    PAIRS += [(f"fusor_vg_dense<{t}>", f"gemm_floor_dense<{t}>")]
for op in ("random", "bind", "bundle100", "sim1000", "search1", "search1000"):  # VSA (bench_vsa): beside its floor
    PAIRS += [(f"fusor_vsa_{op}", f"floor_vsa_{op}")]
PAIRS += [("fusor_vsa_search1000", "hand_vsa_search1000")]
for op in ("fpe1000", "fpe1e6", "level1000", "thermometer1000", "ngrams", "digits_encode", "digits_predict"):  # VSA encoders
    PAIRS += [(f"fusor_vsa_{op}", f"floor_vsa_{op}"), (f"fusor_vsa_{op}", f"hand_vsa_{op}")]
for t in ("float", "double"):  # learning (bench_learn): a training step beside the hand-written one
    PAIRS += [(f"fusor_step<{t}>", f"hand_step<{t}>"), (f"fusor_replay<{t}>", f"hand_step<{t}>"),
              (f"fusor_replay<{t}>", f"fusor_step<{t}>"), (f"fusor_step<{t}>", f"gemm_floor<{t}>"),
              (f"hand_step<{t}>", f"gemm_floor<{t}>")]
for h in ("float16", "bfloat16"):  # the float32 step under ad::autocast<h>, beside float32's and the hand floor
    PAIRS += [(f"fusor_step<{h}>", "fusor_step<float>"), (f"fusor_replay<{h}>", "fusor_replay<float>"),
              (f"fusor_step<{h}>", "hand_step<float>")]
PAIRS += [("fusor_conv2d_step", "conv2d_gemm_floor"), ("fusor_conv2d_forward", "conv2d_gemm_floor")]  # a convolution's step
PAIRS += [("fusor_transformer_step", "transformer_gemm_floor"), ("fusor_transformer_replay", "transformer_gemm_floor"),
          ("fusor_transformer_replay", "fusor_transformer_step")]  # a transformer block's step
PAIRS += [("fusor_scan", "fftw_floor"), ("fusor_scan_box", "fftw_floor_box"), ("fusor_scan_box", "fftw_floor_target"),
          ("fusor_rigid_transform", "copy_floor")]  # template matching (bench_match)
PAIRS += [("fusor_find_peaks", "hand_local_maxima"), ("fusor_read_mrc", "raw_fread_mrc"), ("fusor_write_mrc", "raw_fwrite_mrc")]

med = {}
ROTATIONS = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    head, _, rest = b["run_name"].partition("/")
    med[(head, rest)] = (b["real_time"], b.get("time_unit", "ns"), b.get("GB/s"))
    if "rotations" in b:
        ROTATIONS[(head, rest)] = int(b["rotations"])

print(f"{'fusor':34} {'baseline':34} {'fusor':>10} {'baseline':>10}  fusor/baseline")
for fusor, base in PAIRS:
    for (head, rest), (t, unit, gbs) in sorted(med.items()):
        if head != fusor or (base, rest) not in med:
            continue
        tb = med[(base, rest)][0]
        extra = f"   ({gbs / 1e9:.1f} GB/s)" if gbs else ""
        print(f"{fusor + '/' + rest:34} {base + '/' + rest:34} {t:8.3f}{unit:>2} {tb:8.3f}{unit:>2}  {t / tb:6.3f}{extra}")

# template matching (bench_match): a scan's cost per rotation once set up, (8 rotations - one per
# thread) / (8 - threads), beside the FFT floor's per rotation
rows = []
for (head, rest), (t, unit, _) in sorted(med.items()):
    if head != "fusor_scan" or ("fusor_scan_setup", rest) not in med or ("fftw_floor", rest) not in med:
        continue
    threads = int(rest.split("/")[3])
    rots = ROTATIONS.get(("fusor_scan", rest), 8)
    marginal = (t - med[("fusor_scan_setup", rest)][0]) / (rots - threads)
    floor = med[("fftw_floor", rest)][0] / rots
    rows.append((rest, marginal, floor, unit))
if rows:
    print(f"\n{'scan, one more rotation':34} {'fusor':>10} {'FFT floor':>10}  fusor/floor")
    for rest, marginal, floor, unit in rows:
        print(f"{'fusor_scan/' + rest:34} {marginal:8.3f}{unit:>2} {floor:8.3f}{unit:>2}  {marginal / floor:6.3f}")
