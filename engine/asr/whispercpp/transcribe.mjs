// Transcribes a 16 kHz mono PCM16 WAV with whisper.cpp (the prebuilt
// @fugood/node-whisper-linux-x64 addon) and prints one JSON line: the text,
// the segments, whisper.cpp's timings and the settings it ran with.
//
//   node transcribe.mjs '{"model":"ggml-tiny.bin","wav":"jfk.wav","threads":2,"flash_attn":false}'
//
// Settings (all but model and wav optional):
//   language     "en" (default), or "auto"
//   threads      whisper.cpp's n_threads (default 1)
//   flash_attn   whisper_context_params.flash_attn (default false)
//   temperature  first temperature (default 0)
//   temperature_inc  fallback step (default 0: one temperature, no fallback)
//   best_of      decoders at T > 0 (default 1)
//   max_context  n_max_text_ctx: earlier text as prompt (default whisper.cpp's 16384; 0 none)
//   bench        also run whisper.cpp's bench (whisper_bench: one encode,
//                256 one-token decodes, 64 five-token, 16 prompt of 256) for
//                its per-run timings (whisper_get_timings) (default false)
//   runs         transcribe this many times and report each wall time (default 1)
//   log          print whisper.cpp's log on stderr (default false)
//
// The addon is whisper.cpp's whisper_full with WHISPER_SAMPLING_GREEDY;
// it does not expose no_timestamps, suppress_nst, the thresholds or
// whisper_print_timings, so whisper.cpp's defaults hold for them (see
// README.md here).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const PKG = '@fugood/node-whisper-linux-x64';

function fail(msg) {
  process.stderr.write(`transcribe.mjs: ${msg}\n`);
  process.exit(2);
}

// readWAV returns the PCM16 samples of a mono 16 kHz PCM16 WAV as an
// ArrayBuffer (the addon converts them to float as x/32768, as boxd does).
function readWAV(path) {
  const b = readFileSync(path);
  if (b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE') fail(`${path}: not a RIFF/WAVE file`);
  let fmt = null;
  for (let off = 12; off + 8 <= b.length;) {
    const id = b.toString('ascii', off, off + 4);
    const size = b.readUInt32LE(off + 4);
    const body = off + 8;
    if (id === 'fmt ') {
      fmt = { format: b.readUInt16LE(body), channels: b.readUInt16LE(body + 2), rate: b.readUInt32LE(body + 4), bits: b.readUInt16LE(body + 14) };
    } else if (id === 'data') {
      if (!fmt) fail(`${path}: data before fmt`);
      if (fmt.format !== 1 || fmt.bits !== 16 || fmt.channels !== 1 || fmt.rate !== 16000) {
        fail(`${path}: want 16 kHz mono PCM16, have ${JSON.stringify(fmt)}`);
      }
      const n = Math.min(size, b.length - body) & ~1;
      return b.buffer.slice(b.byteOffset + body, b.byteOffset + body + n);
    }
    off = body + size + (size & 1);
  }
  fail(`${path}: no data chunk`);
}

const args = JSON.parse(process.argv[2] ?? '{}');
if (!args.model || !args.wav) fail('want {"model":FILE.bin,"wav":FILE.wav,...}');
const threads = args.threads ?? 1;
const flashAttn = args.flash_attn ?? false;
const runs = args.runs ?? 1;

let mod;
try {
  mod = require(PKG);
} catch (e) {
  fail(`cannot load ${PKG} (npm ci in engine/asr/whispercpp): ${e.message}`);
}
const { WhisperContext } = mod;

const log = [];
WhisperContext.toggleNativeLog(true, (level, text) => {
  log.push(text);
  if (args.log) process.stderr.write(text);
});

const pcm = readWAV(args.wav);
const t0 = process.hrtime.bigint();
const ctx = new WhisperContext({ filePath: args.model, useGpu: false, useFlashAttn: flashAttn });
const loadMS = Number(process.hrtime.bigint() - t0) / 1e6;

const opts = {
  language: args.language ?? 'en',
  maxThreads: threads,
  temperature: args.temperature ?? 0,
  temperatureInc: args.temperature_inc ?? 0,
  bestOf: args.best_of ?? 1,
  nProcessors: 1,
};
if (args.max_context !== undefined) opts.maxContext = args.max_context;

const wallMS = [];
let res;
for (let i = 0; i < runs; i++) {
  const start = process.hrtime.bigint();
  // transcribeData copies the buffer; hand it a fresh one each run.
  const { promise } = ctx.transcribeData(pcm.slice(0), opts);
  res = await promise;
  wallMS.push(Number(process.hrtime.bigint() - start) / 1e6);
}

let bench = null;
if (args.bench) {
  const b = await ctx.bench(threads);
  bench = { encode_ms: b.encodeMs, decode_ms: b.decodeMs, batchd_ms: b.batchdMs, prompt_ms: b.promptMs, system_info: b.config };
}
await ctx.release();
WhisperContext.toggleNativeLog(false);

const pick = (re) => {
  for (const l of log) {
    const m = l.match(re);
    if (m) return m[1].trim();
  }
  return undefined;
};
const out = {
  text: res.result,
  language: res.language,
  segments: res.segments.map((s) => ({ t0_ms: s.t0, t1_ms: s.t1, text: s.text })),
  threads,
  flash_attn: flashAttn,
  options: opts,
  timings: { load_ms: loadMS, transcribe_ms: wallMS },
  bench,
  whisper_cpp: {
    package: `${PKG}@${require(`${PKG}/package.json`).version}`,
    flash_attn_log: pick(/flash attn\s*=\s*(\S+)/),
    // whisper_full decodes a model with 2 decoder layers (and not
    // large-v3's vocabulary) without timestamps, as a distil-whisper.
    no_timestamps_forced: log.some((l) => l.includes('forcing no_timestamps')),
    system_info: pick(/system_info:\s*(.*)/),
  },
};
process.stdout.write(JSON.stringify(out) + '\n');
