#!/usr/bin/env python3
"""The report page in a real browser (ctest label `browser`).

Makes a tiny private run (DP actor-critic on a chain, with its ledger and audit), writes its page
with `dprl report`, and opens it in headless Chromium with name resolution disabled (nothing may
be fetched). Fails on any console message (the page logs nothing, so any message is an error or
a warning: an exception, a failed load), when the screenshot is blank, or when the policy
animation does not advance between two virtual times (the page's script writes the frame shown
into the player's data-frame; the screenshots at those times must differ too).

When no Chromium is installed the test exits 77, which ctest reports as skipped (never passed).

    report_browser_test.py DPRL_EXE SOURCE_DIR
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def png_pixels(path):
    """(width, height, rows of RGBA tuples) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        raise ValueError(f"{path}: unexpected PNG format (depth {depth}, colour {colour})")
    channels = 4 if colour == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def browse(browser, url, profile, budget_ms, extra):
    """Runs headless Chromium on url; returns (stdout, console lines)."""
    cmd = [browser, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
           "--disable-extensions", "--disable-background-networking", "--disable-sync",
           f"--user-data-dir={profile}", "--host-resolver-rules=MAP * ~NOTFOUND",
           "--enable-logging=stderr", "--v=0", f"--virtual-time-budget={budget_ms}"] + extra + [url]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, HOME=profile))
    console = [line for line in r.stderr.splitlines() if ":CONSOLE" in line]
    if r.returncode != 0:
        raise AssertionError(f"chromium exited {r.returncode}: {r.stderr[-2000:]}")
    return r.stdout, console


def main():
    exe, src = sys.argv[1], sys.argv[2]
    browser = chromium()
    if browser is None:
        print("SKIPPED: no Chromium (chromium, chromium-browser or google-chrome) on PATH; "
              "scripts/setup.sh --tests installs Debian's chromium")
        return SKIP
    failures = []
    with tempfile.TemporaryDirectory(prefix="dprl_browser_") as tmp:
        run = os.path.join(tmp, "run")
        subprocess.run([exe, "run", os.path.join(src, "configs/audit/actor_critic_chain.yaml"),
                        "--quiet", "--out", run, "--set", "env.params.n=2000",
                        "--set", "audit.canaries=2000", "--set", "audit.guesses=100",
                        "--set", "algo.params.budget_epsilon=50"],
                       check=True, capture_output=True)
        subprocess.run([exe, "report", run], check=True, capture_output=True)
        url = "file://" + os.path.join(run, "report.html")
        profile = os.path.join(tmp, "profile")
        os.makedirs(profile)

        # the DOM at two virtual times: the player shows different frames
        frames = []
        for budget in (400, 1400):
            dom, console = browse(browser, url, profile, budget, ["--dump-dom"])
            failures += [f"console at {budget} ms: {line}" for line in console]
            m = re.search(r'id="policy-player"[^>]*', dom)
            if not m:
                failures.append(f"no policy player in the DOM at {budget} ms")
                continue
            attrs = dict(re.findall(r'([a-z-]+)="([^"]*)"', m.group(0)))
            frames.append(int(attrs.get("data-frame", "-1")))
            if int(attrs.get("data-frames", "0")) < 3:
                failures.append(f"the player has {attrs.get('data-frames')} frames")
            if "privacy-epsilon" not in dom:
                failures.append("the privacy record is not on the page")
        if len(frames) == 2 and frames[0] == frames[1]:
            failures.append(f"the animation did not advance: frame {frames[0]} at 400 and 1400 ms")

        # screenshots at the same two times: not blank, and different where the episode plays
        shots = []
        for budget in (400, 1400):
            png = os.path.join(tmp, f"shot{budget}.png")
            _, console = browse(browser, url, profile, budget,
                                ["--window-size=1280,900", "--hide-scrollbars",
                                 f"--screenshot={png}"])
            failures += [f"console at {budget} ms (screenshot): {line}" for line in console]
            width, height, channels, rows = png_pixels(png)
            colours, ink = set(), 0
            for row in rows[::4]:
                for x in range(0, width * channels, channels * 4):
                    px = row[x:x + 3]
                    colours.add(px)
                    ink += px != b"\xff\xff\xff"
            sampled = len(rows[::4]) * len(range(0, width * channels, channels * 4))
            if len(colours) < 16 or ink < sampled // 20:
                failures.append(f"the screenshot at {budget} ms looks blank: {len(colours)} "
                                f"colours, {ink} of {sampled} sampled pixels not white")
            shots.append(rows)
        if len(shots) == 2 and shots[0] == shots[1]:
            failures.append("the screenshots at 400 and 1400 ms are identical: no animation")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: console clean, frames {frames}, screenshots differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
