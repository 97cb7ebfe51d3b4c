#!/usr/bin/env python3
"""Reads what gpu/check/check.sh left in $OUT and prints the summary table
(the last lines of the check's output), writing the same figures to
$OUT/summary.json. Every ratio is boxd over the named peer, measured in
the same run on the same card; an absolute figure names the card.

Go benchmark lines look like
  BenchmarkAggregate/streams=8-16  1  1234 ns/op  812.5 boxd_tok/s  640.1 ollama_tok/s  1.27 ratio
and are read into {"Aggregate/streams=8": {"boxd_tok/s": 812.5, ...}}.
"""

import argparse
import glob
import json
import os
import re
import sys

BENCH_LINE = re.compile(r"^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$")


def parse_bench(text):
    """Benchmark results in a Go test binary's output."""
    out = {}
    for line in text.splitlines():
        m = BENCH_LINE.match(line.strip())
        if not m:
            continue
        fields = m.group(2).split()
        metrics = {}
        for i in range(0, len(fields) - 1, 2):
            try:
                metrics[fields[i + 1]] = float(fields[i])
            except ValueError:
                pass
        out[m.group(1)] = metrics
    return out


def read(path, default=""):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return default


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt(v, digits=2):
    if v is None:
        return "-"
    if isinstance(v, float):
        if v != v:  # NaN
            return "-"
        if abs(v) >= 100:
            return f"{v:.0f}"
        return f"{v:.{digits}f}"
    return str(v)


def ratio(a, b):
    if a is None or b is None or b == 0 or a != a or b != b:
        return None
    return a / b


def summarize(out_dir, gpu, dry, quick, elapsed):
    steps = []
    for line in read(os.path.join(out_dir, "steps.tsv")).splitlines():
        f = line.split("\t")
        if len(f) >= 3:
            steps.append(dict(step=f[0], status=f[1], seconds=int(f[2] or 0), note=f[3] if len(f) > 3 else ""))
    s = dict(gpu=gpu, dry=dry == "1", quick=quick == "1", elapsed_s=elapsed, steps=steps,
             machine=read(os.path.join(out_dir, "machine.txt")).strip().splitlines())
    rows = []  # (section, measure, boxd, peer, ratio, unit)

    # Build and serve.
    build = next((x for x in steps if x["step"] == "cuda-build"), None)
    if build:
        s["cuda_build_s"] = build["seconds"] if build["status"] == "ok" else None
        rows.append(("build", "ggml CUDA backend (one architecture)" if not s["dry"] else "ggml-base (dry run)",
                     fmt(build["seconds"], 0) + " s" if build["status"] == "ok" else build["status"], "", "", ""))
    health = read_json(os.path.join(out_dir, "healthz.json"))
    s["healthz"] = health
    serve_log = read(os.path.join(out_dir, "serve.log"))
    offload = re.findall(r"offloaded (\d+)/(\d+) layers to GPU", serve_log)
    s["serve_offloaded"] = [f"{a}/{b}" for a, b in offload]
    devs = read_json(os.path.join(out_dir, "gpu.json")) or {}
    s["devices"] = devs.get("devices", [])
    gpus = [d for d in s["devices"] if d.get("kind") in ("gpu", "igpu")]
    # A call that ran only some steps (GPU_CHECK_ONLY) did not serve: say
    # so, rather than "no" and "CPU only".
    served = any(x["step"] == "serve" and x["status"] != "skipped" for x in steps)
    if served:
        rows.append(("serve", "/healthz ok", "yes" if health and health.get("ok") else "no", "", "", ""))
        rows.append(("serve", "layers offloaded (log)", ", ".join(s["serve_offloaded"]) or "none", "", "", ""))
    else:
        rows.append(("serve", "boxd serve", "not run in this call", "", "", ""))
    diag = next((x for x in steps if x["step"] == "diag"), None)
    if diag:
        rows.append(("serve", "chat engine tests on the device (open, generate, close)", diag["status"], "", "", ""))
    if served:
        rows.append(("serve", "boxd gpu", "; ".join(f"{d['description'] or d['name']} {d['total_bytes'] >> 20} MiB" for d in gpus) or "CPU only", "", "", ""))

    # Chat against ollama.
    chat = parse_bench(read(os.path.join(out_dir, "chat.log")))
    s["chat"] = chat
    for name, label in [("DecodeSingle", "decode, 1 stream"), ("PromptProcessing", "prompt processing")]:
        m = chat.get(name)
        if m:
            rows.append(("chat 110M Q8_0", label + " tok/s", fmt(m.get("boxd_tok/s")), fmt(m.get("ollama_tok/s")), fmt(m.get("ratio")), "ollama"))
    for name in sorted((k for k in chat if k.startswith("Aggregate/")), key=lambda k: int(k.split("=")[-1])):
        m = chat[name]
        rows.append(("chat 110M Q8_0", f"aggregate {name.split('=')[-1]} streams tok/s", fmt(m.get("boxd_tok/s")), fmt(m.get("ollama_tok/s")),
                     fmt(m.get("ratio")), "ollama"))
    large = parse_bench(read(os.path.join(out_dir, "chat-large.log"))).get("DecodeSingle")
    bw = read_json(os.path.join(out_dir, "bandwidth.json"))
    s["bandwidth"] = bw
    if large:
        s["chat_large"] = large
        rows.append(("chat 27B Q4_K_M", "decode, 1 stream tok/s", fmt(large.get("boxd_tok/s")), fmt(large.get("ollama_tok/s")), fmt(large.get("ratio")), "ollama"))
        if bw and large.get("model_GB"):
            ceiling = bw["copy_GBps"] / large["model_GB"]
            s["chat_large_ceiling_tok_s"] = ceiling
            rows.append(("chat 27B Q4_K_M", f"share of the bandwidth ceiling ({ceiling:.0f} tok/s = {bw['copy_GBps']:.0f} GB/s / {large['model_GB']:.1f} GB)",
                         fmt(ratio(large.get("boxd_tok/s"), ceiling)), fmt(ratio(large.get("ollama_tok/s"), ceiling)), "", "ceiling"))
    elif bw:
        rows.append(("memory", "device-to-device copy GB/s", fmt(bw["copy_GBps"]), "", "", gpu))

    # Speech against transformers.
    s["speech"] = {}
    for path in sorted(glob.glob(os.path.join(out_dir, "speech-*-boxd.log"))):
        shape = os.path.basename(path)[len("speech-"):-len("-boxd.log")]
        b = parse_bench(read(path))
        h = read_json(os.path.join(out_dir, f"hf-{shape}.json")) or {}
        win, lf, bt = b.get("Speed/window", {}), b.get("Speed/longform", {}), b.get("Speed/batch", {})
        s["speech"][shape] = dict(boxd=b, hf=h)
        peer = "transformers" if h else "(no peer)"
        sec = f"whisper {shape}"
        # Lower is better for times: the ratio is peer over boxd, so above 1 means boxd is faster.
        rows.append((sec, "encoder ms / 30 s window", fmt(win.get("enc_ms")), fmt(h.get("enc_ms")), fmt(ratio(h.get("enc_ms"), win.get("enc_ms"))), peer + " (x faster)"))
        rows.append((sec, "decoder ms / step", fmt(win.get("step_ms")), fmt(h.get("step_ms")), fmt(ratio(h.get("step_ms"), win.get("step_ms"))), peer + " (x faster)"))
        rows.append((sec, "long file real-time factor", fmt(lf.get("rtf"), 1), fmt(h.get("rtf"), 1), fmt(ratio(lf.get("rtf"), h.get("rtf"))), peer))
        rows.append((sec, f"batched windows/s ({h.get('batch', '')})", fmt(bt.get("windows_per_s")), fmt(h.get("windows_per_s")),
                     fmt(ratio(bt.get("windows_per_s"), h.get("windows_per_s"))), peer))
        if bt.get("windows_per_s_serial"):
            rows.append((sec, "batched windows/s, one at a time vs steps batched", fmt(bt.get("windows_per_s_serial")), fmt(bt.get("windows_per_s")),
                         fmt(bt.get("batch_speedup")), "boxd batched (x faster)"))
        # asr.flash_attention on (boxd column) against off (peer column), same run.
        fb = parse_bench(read(os.path.join(out_dir, f"speech-{shape}-flash.log")))
        if fb:
            s["speech"][shape]["flash"] = fb
            fw, fl, fbt = fb.get("Speed/window", {}), fb.get("Speed/longform", {}), fb.get("Speed/batch", {})
            against = "flash on vs off (x faster)"
            rows.append((sec, "flash attention: encoder ms", fmt(fw.get("enc_ms")), fmt(win.get("enc_ms")), fmt(ratio(win.get("enc_ms"), fw.get("enc_ms"))), against))
            rows.append((sec, "flash attention: decoder ms / step", fmt(fw.get("step_ms")), fmt(win.get("step_ms")), fmt(ratio(win.get("step_ms"), fw.get("step_ms"))), against))
            rows.append((sec, "flash attention: long file real-time factor", fmt(fl.get("rtf"), 1), fmt(lf.get("rtf"), 1), fmt(ratio(fl.get("rtf"), lf.get("rtf"))), against))
            rows.append((sec, "flash attention: batched windows/s", fmt(fbt.get("windows_per_s")), fmt(bt.get("windows_per_s")),
                         fmt(ratio(fbt.get("windows_per_s"), bt.get("windows_per_s"))), against))

    # Live sessions (with asr.flash_attention on too) and the arbiter.
    live = parse_bench(read(os.path.join(out_dir, "live.log")))
    s["live"] = live
    live_flash = parse_bench(read(os.path.join(out_dir, "live-flash.log")))
    s["live_flash"] = live_flash
    for name, m, flash in sorted([(k, v, "") for k, v in live.items()] + [(k, v, " flash") for k, v in live_flash.items()], key=lambda x: (x[2], x[0])):
        if not name.startswith("ConcurrentLiveSessions/sessions="):
            continue
        n = name.split("=")[-1]
        sec = f"live x{n}{flash}"
        rows.append((sec, "final ms p50 / p95", f"{fmt(m.get('final_p50_ms'))} / {fmt(m.get('final_p95_ms'))}", "", "", ""))
        rows.append((sec, "partial ms p50 / p95", f"{fmt(m.get('partial_p50_ms'))} / {fmt(m.get('partial_p95_ms'))}", "", "", ""))
        rows.append((sec, "kept up in real time", "yes" if m.get("realtime") == 1 else "no", "", "", ""))
    arb = parse_bench(read(os.path.join(out_dir, "arbiter.log")))
    s["arbiter"] = arb
    alone = arb.get("LiveUnderChatLoad/live-alone", {})
    loaded_name = next((k for k in arb if k.startswith("LiveUnderChatLoad/live+chat")), None)
    loaded = arb.get(loaded_name, {}) if loaded_name else {}
    chat_alone = arb.get("LiveUnderChatLoad/chat-alone", {})
    if alone or loaded:
        sec = "arbiter"
        streams = loaded_name.split("chat")[-1] if loaded_name else "?"
        rows.append((sec, f"final ms p50/p95, alone vs {streams} chat streams", f"{fmt(alone.get('final_p50_ms'))}/{fmt(alone.get('final_p95_ms'))}",
                     f"{fmt(loaded.get('final_p50_ms'))}/{fmt(loaded.get('final_p95_ms'))}", fmt(ratio(loaded.get("final_p50_ms"), alone.get("final_p50_ms"))), "loaded/alone"))
        rows.append((sec, "partial ms p50/p95, alone vs loaded", f"{fmt(alone.get('partial_p50_ms'))}/{fmt(alone.get('partial_p95_ms'))}",
                     f"{fmt(loaded.get('partial_p50_ms'))}/{fmt(loaded.get('partial_p95_ms'))}", fmt(ratio(loaded.get("partial_p50_ms"), alone.get("partial_p50_ms"))), "loaded/alone"))
        rows.append((sec, "chat tok/s alone vs beside live", fmt(chat_alone.get("chat_tok/s")), fmt(loaded.get("chat_tok/s")), fmt(loaded.get("chat_cost")), "cost"))

    dia = parse_bench(read(os.path.join(out_dir, "diarize.log")))
    s["diarize"] = dia
    m = next((v for k, v in dia.items() if k.startswith("Neural10Min")), None)
    if m:
        sec = "diarization (pyannote-shape networks, random weights)"
        rows.append((sec, f"real-time factor over {fmt(m.get('audio-s'), 0)} s of audio (goal <= 0.005 on the card)", fmt(m.get("rtf"), 4), "", "",
                     gpu if not s["dry"] else "CPU (dry run)"))

    failed = [x["step"] for x in steps if x["status"] != "ok" and x["status"] != "prebuilt"]
    s["failed_or_skipped"] = failed
    s["rows"] = [dict(section=r[0], measure=r[1], boxd=r[2], peer=r[3], ratio=r[4], against=r[5]) for r in rows]
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(s, f, indent=1)

    widths = [max(len(str(r[i])) for r in rows + [("section", "measure", "boxd", "peer", "ratio", "against")]) for i in range(6)]
    lines = [f"boxd GPU check on {gpu}{' (DRY RUN on the CPU)' if s['dry'] else ''}: {elapsed} s; "
             f"steps not ok: {', '.join(failed) if failed else 'none'}"]
    for r in [("section", "measure", "boxd", "peer", "ratio", "against")] + rows:
        lines.append("  ".join(str(v).ljust(w) for v, w in zip(r, widths)).rstrip())
    return s, "\n".join(lines)


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--gpu", default="cpu")
    p.add_argument("--dry", default="0")
    p.add_argument("--quick", default="0")
    p.add_argument("--elapsed", type=int, default=0)
    a = p.parse_args(argv)
    s, table = summarize(a.out, a.gpu, a.dry, a.quick, a.elapsed)
    print(table)
    return 0 if not s["failed_or_skipped"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
