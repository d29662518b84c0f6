#!/usr/bin/env python3
"""Blind mutation fuzzing through a fuzz target's replay executable (no coverage feedback; for
machines without the libFuzzer build, docs/robustness.md):
   tools/fuzz_blind.py EXE CORPUS_DIR SECONDS OUT_DIR
e.g. tools/fuzz_blind.py build/tests/fuzz/dprl_fuzz_dataset tests/fuzz/corpus/dataset 600 /tmp/fz
Batches of 40 inputs, each a seed of the corpus with 1 to 8 random edits (bit flips, random or
boundary bytes, deletions, insertions, splices from another seed; at most 64 KiB), are replayed;
a batch whose replay does not exit 0 is replayed input by input and each failing input is kept in
OUT_DIR/finding_N with its output. The random stream is seeded (35): a run is repeatable."""
import os, random, shutil, subprocess, sys, time
exe, corpus, seconds, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
os.makedirs(out, exist_ok=True)
seeds = [open(os.path.join(corpus, f), "rb").read() for f in sorted(os.listdir(corpus))]
rng = random.Random(35)
INTERESTING = [b"\x00", b"\xff", b"\x7f", b"\x80", b"\x00" * 8, b"\xff" * 8, b"\x7f" + b"\xff" * 7,
               b"\x00\x00\x00\x00\x00\x00\xf0\x7f", b"\x00\x00\x00\x00\x00\x00\xf8\x7f", b"\x01\x00\x00\x00"]
def mutate(b):
    b = bytearray(b)
    for _ in range(rng.choice([1, 1, 2, 3, 5, 8])):
        k = rng.randrange(6)
        if not b: b = bytearray(rng.choice(seeds)); continue
        i = rng.randrange(len(b))
        if k == 0: b[i] ^= 1 << rng.randrange(8)
        elif k == 1: b[i] = rng.randrange(256)
        elif k == 2:
            v = rng.choice(INTERESTING); b[i:i + len(v)] = v
        elif k == 3: del b[i:i + rng.randrange(1, 64)]
        elif k == 4: b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 32)))
        else:
            o = rng.choice(seeds); j = rng.randrange(max(1, len(o)))
            b[i:i + rng.randrange(1, 256)] = o[j:j + rng.randrange(1, 256)]
    return bytes(b[:65536])
start, execs, findings, batch = time.time(), 0, 0, 0
while time.time() - start < seconds:
    d = os.path.join(out, "batch"); shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    for n in range(40):
        open(os.path.join(d, "%03d" % n), "wb").write(mutate(rng.choice(seeds)))
    r = subprocess.run([exe, d], capture_output=True, timeout=600)
    execs += 40; batch += 1
    if r.returncode != 0:
        # which input: replay one by one
        for f in sorted(os.listdir(d)):
            rr = subprocess.run([exe, os.path.join(d, f)], capture_output=True, timeout=600)
            if rr.returncode != 0:
                findings += 1
                shutil.copy(os.path.join(d, f), os.path.join(out, "finding_%d" % findings))
                open(os.path.join(out, "finding_%d.txt" % findings), "wb").write(rr.stdout[-2000:] + rr.stderr[-4000:])
print("executions %d in %.0f s (%.1f/s), batches %d, findings %d" % (execs, time.time() - start, execs / (time.time() - start), batch, findings))
