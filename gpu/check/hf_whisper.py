#!/usr/bin/env python3
"""The Hugging Face transformers side of boxd's GPU check (gpu/check/check.sh).

  hf_whisper.py make --shape tiny --vocab-bin whisper-vocab-tiny.bin --out DIR
      builds a random-weight WhisperForConditionalGeneration from a config
      (no download), casts it to fp16 and writes it with save_pretrained,
      plus vocab.json and added_tokens.json (the real Whisper vocabulary,
      read from a whisper.cpp vocabulary file), so that
      `boxd models convert DIR out.gguf` reads the very same checkpoint.
  hf_whisper.py bench --ckpt DIR --audio a.wav --json out.json
      times the checkpoint on CUDA in fp16 with the procedure boxd's
      BenchmarkSpeed (engine/asr/stream/speed_test.go) uses: greedy, no
      timestamps, language given, each 30 s window decoded to at most
      --tokens tokens (one forward pass over the 4-token prompt, then one
      per token, stopping at <|endoftext|>), log-mel by the library's own
      WhisperFeatureExtractor.
  hf_whisper.py bandwidth --json out.json
      a large device-to-device copy: bytes read plus written per second.

The vocabulary and layout helpers need only the standard library, so the
unit tests (gpu/check/hf_whisper_test.py) run without torch.
"""

import argparse
import json
import math
import struct
import sys
import time
import wave

# Whisper shapes (openai/whisper-* config.json values).
SHAPES = {
    "tiny": dict(d_model=384, layers=4, heads=6, num_mel_bins=80, vocab_size=51865),
    "base": dict(d_model=512, layers=6, heads=8, num_mel_bins=80, vocab_size=51865),
    "small": dict(d_model=768, layers=12, heads=12, num_mel_bins=80, vocab_size=51865),
    "large-v3": dict(d_model=1280, layers=32, heads=20, num_mel_bins=128, vocab_size=51866),
}

SAMPLE_RATE = 16000
WINDOW_S = 30


def layout(n_vocab):
    """whisper.cpp's special-token layout, which follows from the vocabulary
    size alone (engine/models/hfwhisper/vocab.go newLayout)."""
    eot, n_lang = 50256, 99
    if n_vocab >= 51865:
        eot, n_lang = 50257, n_vocab - 51765 - 1
    sot = eot + 1
    translate = sot + 1 + n_lang
    return dict(eot=eot, sot=sot, en=sot + 1, translate=translate, transcribe=translate + 1,
                solm=translate + 2, prev=translate + 3, nospeech=translate + 4,
                notimestamps=translate + 5, beg=translate + 6, n_lang=n_lang)


def gpt2_byte_alphabet():
    """GPT-2's bytes_to_unicode: byte -> character."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def read_whisper_cpp_vocab(path):
    """The regular tokens (raw bytes) of a whisper.cpp ggml file."""
    with open(path, "rb") as f:
        data = f.read()
    (magic,) = struct.unpack_from("<I", data, 0)
    if magic != 0x67676D6C:
        raise ValueError(f"{path}: not a whisper.cpp ggml file (magic {magic:#x})")
    off = 4 + 11 * 4
    n_mel, n_fft = struct.unpack_from("<ii", data, off)
    off += 8 + 4 * n_mel * n_fft
    (n,) = struct.unpack_from("<i", data, off)
    off += 4
    toks = []
    for _ in range(n):
        (ln,) = struct.unpack_from("<I", data, off)
        off += 4
        toks.append(data[off:off + ln])
        off += ln
    return toks


def vocab_files(tokens, n_vocab):
    """vocab.json and added_tokens.json contents for a checkpoint of
    n_vocab tokens: ids 0..eot-1 are the regular tokens in GPT-2's byte
    alphabet (the first 256 are the bytes themselves; a duplicate string,
    which whisper.cpp files hold for a few ids, gets a unique stand-in),
    the special tokens sit where whisper.cpp's layout puts them."""
    lay = layout(n_vocab)
    eot = lay["eot"]
    if len(tokens) < eot:
        raise ValueError(f"the vocabulary has {len(tokens)} regular tokens, {eot} are needed")
    enc = gpt2_byte_alphabet()
    order = [b for b in range(256) if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or b >= 0xAE]
    order += [b for b in range(256) if b not in order]
    vocab, seen = {}, set()
    for i in range(eot):
        raw = bytes([order[i]]) if i < 256 else tokens[i]
        s = "".join(enc[b] for b in raw)
        if s in seen:
            s = "".join(enc[b] for b in b"\xc0\xc1" + str(i).encode())
        seen.add(s)
        vocab[s] = i
    added = {
        "<|endoftext|>": eot, "<|startoftranscript|>": lay["sot"], "<|en|>": lay["en"],
        "<|translate|>": lay["translate"], "<|transcribe|>": lay["transcribe"],
        "<|startoflm|>": lay["solm"], "<|startofprev|>": lay["prev"],
        "<|nocaptions|>": lay["nospeech"], "<|notimestamps|>": lay["notimestamps"],
    }
    return vocab, added


def read_wav(path):
    """16 kHz mono PCM16 WAV as a list of floats in [-1, 1]."""
    with wave.open(path, "rb") as w:
        if w.getframerate() != SAMPLE_RATE or w.getnchannels() != 1 or w.getsampwidth() != 2:
            raise ValueError(f"{path}: want 16 kHz mono 16-bit PCM")
        raw = w.readframes(w.getnframes())
    n = len(raw) // 2
    return [v / 32768.0 for v in struct.unpack(f"<{n}h", raw)]


def repeat_to(pcm, n):
    out = []
    while len(out) < n:
        out.extend(pcm[: n - len(out)])
    return out


def cmd_make(a):
    import torch
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    s = SHAPES[a.shape]
    lay = layout(s["vocab_size"])
    cfg = WhisperConfig(
        vocab_size=s["vocab_size"], num_mel_bins=s["num_mel_bins"], d_model=s["d_model"],
        encoder_layers=s["layers"], decoder_layers=s["layers"],
        encoder_attention_heads=s["heads"], decoder_attention_heads=s["heads"],
        encoder_ffn_dim=4 * s["d_model"], decoder_ffn_dim=4 * s["d_model"],
        max_source_positions=1500, max_target_positions=448,
        decoder_start_token_id=lay["sot"], eos_token_id=lay["eot"], pad_token_id=lay["eot"], bos_token_id=lay["eot"],
        begin_suppress_tokens=None, suppress_tokens=None,
    )
    torch.manual_seed(a.seed)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    with torch.device(dev):
        model = WhisperForConditionalGeneration(cfg)
    model = model.half()
    model.save_pretrained(a.out)
    vocab, added = vocab_files(read_whisper_cpp_vocab(a.vocab_bin), s["vocab_size"])
    with open(f"{a.out}/vocab.json", "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(f"{a.out}/added_tokens.json", "w", encoding="utf-8") as f:
        json.dump(added, f)
    n = sum(p.numel() for p in model.parameters())
    print(f"hf_whisper: {a.shape}: {n / 1e6:.1f}M parameters written to {a.out}")


def cmd_bench(a):
    import numpy as np
    import torch
    from transformers import WhisperFeatureExtractor, WhisperForConditionalGeneration

    torch.set_num_threads(max(1, a.threads))
    dev = "cuda"
    model = WhisperForConditionalGeneration.from_pretrained(a.ckpt, dtype=torch.float16).to(dev).eval()
    cfg = model.config
    lay = layout(cfg.vocab_size)
    fe = WhisperFeatureExtractor(feature_size=cfg.num_mel_bins, sampling_rate=SAMPLE_RATE)
    pcm = read_wav(a.audio)
    window = np.asarray(repeat_to(pcm, WINDOW_S * SAMPLE_RATE), dtype=np.float32)
    long = np.asarray(repeat_to(pcm, a.long_s * SAMPLE_RATE), dtype=np.float32)
    prompt = [lay["sot"], lay["en"], lay["transcribe"], lay["notimestamps"]]
    eot = lay["eot"]
    sync = torch.cuda.synchronize

    def mel(chunks):
        f = fe([c for c in chunks], sampling_rate=SAMPLE_RATE, return_tensors="np").input_features
        return torch.from_numpy(f).to(dev, dtype=torch.float16)

    @torch.inference_mode()
    def decode(enc, stop):
        b = enc.shape[0]
        ids = torch.tensor([prompt] * b, device=dev)
        out = model(encoder_outputs=(enc,), decoder_input_ids=ids, use_cache=True)
        pkv, tok, calls = out.past_key_values, out.logits[:, -1].argmax(-1), 1
        for _ in range(a.tokens):
            if stop and int(tok[0]) == eot:  # a real decoder reads each token
                break
            out = model(encoder_outputs=(enc,), decoder_input_ids=tok[:, None], past_key_values=pkv, use_cache=True)
            pkv, tok, calls = out.past_key_values, out.logits[:, -1].argmax(-1), calls + 1
        if not stop:
            tok.cpu()
        return calls

    @torch.inference_mode()
    def one_window(chunks, stop=True):
        t0 = time.perf_counter()
        feats = mel(chunks)
        sync()
        t1 = time.perf_counter()
        enc = model.model.encoder(feats).last_hidden_state
        sync()
        t2 = time.perf_counter()
        calls = decode(enc, stop)
        sync()
        t3 = time.perf_counter()
        return t1 - t0, t2 - t1, t3 - t2, calls

    one_window([window])  # warm up: kernels, cuBLAS handles, caches
    one_window([window])
    mels, encs, decs, calls = [], [], [], 0
    for _ in range(max(1, a.reps)):
        m, e, d, c = one_window([window])
        mels.append(m)
        encs.append(e)
        decs.append(d)
        calls += c
    res = dict(
        shape=a.shape, implementation="transformers", dtype="float16",
        torch=torch.__version__, transformers=__import__("transformers").__version__,
        device=torch.cuda.get_device_name(0), params_M=round(sum(p.numel() for p in model.parameters()) / 1e6, 1),
        mel_ms=1e3 * sum(mels) / len(mels), enc_ms=1e3 * sum(encs) / len(encs),
        step_ms=1e3 * sum(decs) / max(1, calls), steps_per_window=calls / len(decs), tokens=a.tokens,
    )
    # Long form: consecutive 30 s windows, each decoded in turn.
    n_win = math.ceil(a.long_s / WINDOW_S)
    t0 = time.perf_counter()
    long_calls = 0
    for k in range(n_win):
        _, _, _, c = one_window([long[k * WINDOW_S * SAMPLE_RATE:(k + 1) * WINDOW_S * SAMPLE_RATE]])
        long_calls += c
    wall = time.perf_counter() - t0
    res.update(rtf=a.long_s / wall, long_s=a.long_s, long_windows=n_win, long_steps_per_window=long_calls / n_win)
    # Batched: a.batch windows encoded and decoded together.
    one_window([window] * a.batch, stop=False)
    t0 = time.perf_counter()
    one_window([window] * a.batch, stop=False)
    res.update(batch=a.batch, windows_per_s=a.batch / (time.perf_counter() - t0))
    with open(a.json, "w") as f:
        json.dump(res, f, indent=1)
    print("hf_whisper:", json.dumps(res))


def cmd_bandwidth(a):
    import torch

    n = a.mib << 20
    x = torch.empty(n, dtype=torch.uint8, device="cuda")
    x.random_(0, 255)
    y = torch.empty_like(x)
    for _ in range(3):
        y.copy_(x)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(10):
        start.record()
        y.copy_(x)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    times.sort()
    t = times[len(times) // 2]
    res = dict(device=torch.cuda.get_device_name(0), bytes=2 * n, seconds=t, copy_GBps=2 * n / t / 1e9)
    with open(a.json, "w") as f:
        json.dump(res, f, indent=1)
    print("hf_whisper: bandwidth", json.dumps(res))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("--shape", choices=sorted(SHAPES), required=True)
    m.add_argument("--vocab-bin", required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--seed", type=int, default=11)
    b = sub.add_parser("bench")
    b.add_argument("--ckpt", required=True)
    b.add_argument("--shape", default="")
    b.add_argument("--audio", required=True)
    b.add_argument("--json", required=True)
    b.add_argument("--tokens", type=int, default=64)
    b.add_argument("--long-s", type=int, default=120)
    b.add_argument("--batch", type=int, default=8)
    b.add_argument("--reps", type=int, default=3)
    b.add_argument("--threads", type=int, default=2)
    w = sub.add_parser("bandwidth")
    w.add_argument("--json", required=True)
    w.add_argument("--mib", type=int, default=4096)
    a = p.parse_args(argv)
    {"make": cmd_make, "bench": cmd_bench, "bandwidth": cmd_bandwidth}[a.cmd](a)


if __name__ == "__main__":
    main(sys.argv[1:])
