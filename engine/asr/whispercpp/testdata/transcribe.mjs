// Transcribes a WAV with whisper.cpp's whisper-cli (built by build.mjs) and
// prints one JSON line: the text, the segments with their tokens, the
// timings whisper_print_timings gave, and what it ran with.
//
//   node transcribe.mjs '{"model":"ggml-tiny.bin","wav":"jfk.wav","threads":2}'
//
// Settings (all but model and wav optional):
//   language        "en" (default), or "auto"
//   threads         n_threads (default 1)
//   flash_attn      whisper_context_params.flash_attn (default false)
//   timestamps      decode timestamps (default false: --no-timestamps)
//   temperature_inc fallback step (default 0: --no-fallback, one temperature)
//   beam_size       at T=0 (default 1: greedy)
//   best_of         decoders at T>0 (default 1)
//   max_context     --max-context: how much earlier text is the prompt
//                   (default whisper-cli's -1: all that fits; 0: none)
//   suppress_nst    suppress non-speech tokens (default false)
//   log             copy whisper-cli's log to stderr
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, 'node_modules', '.boxd-whisper-cpp', 'build', 'bin', 'whisper-cli');
const pkg = join(here, 'node_modules', 'nodejs-whisper', 'package.json');

function fail(msg) {
  process.stderr.write(`transcribe.mjs: ${msg}\n`);
  process.exit(2);
}

const a = JSON.parse(process.argv[2] ?? '{}');
if (!a.model || !a.wav) fail('want {"model":FILE.bin,"wav":FILE.wav,...}');
if (!existsSync(cli)) fail(`${cli} is missing: npm ci in ${here}`);

const threads = a.threads ?? 1;
const flashAttn = a.flash_attn ?? false;
const tinc = a.temperature_inc ?? 0;
const args = [
  '-m', a.model, '-f', a.wav,
  '-l', a.language ?? 'en',
  '-t', String(threads),
  '-p', '1',
  '-ng', // CPU: this build has no GPU backend anyway
  flashAttn ? '-fa' : '-nfa',
  '-bs', String(a.beam_size ?? 1),
  '-bo', String(a.best_of ?? 1),
  '-tp', '0',
];
if (tinc > 0) args.push('-tpi', String(tinc));
else args.push('-nf');
if (!(a.timestamps ?? false)) args.push('-nt');
if (a.max_context !== undefined) args.push('-mc', String(a.max_context));
if (a.suppress_nst) args.push('-sns');

const dir = mkdtempSync(join(tmpdir(), 'boxd-whispercpp-'));
let log;
let json;
try {
  args.push('-ojf', '-of', join(dir, 'out'));
  const r = spawnSync(cli, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  log = r.stderr ?? '';
  if (r.error || r.status !== 0) {
    fail(`whisper-cli ${args.join(' ')}: ${r.error ?? `exit ${r.status} ${r.signal ?? ''}`}\n${log.slice(-4000)}`);
  }
  json = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8'));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (a.log) process.stderr.write(log);

// timings: whisper_print_timings lines, e.g.
//   whisper_print_timings:   decode time =   628.72 ms /   219 runs (     2.87 ms per run)
function timings(text) {
  const t = {};
  for (const line of text.split('\n')) {
    let m = line.match(/whisper_print_timings:\s+(\w+) time =\s*([\d.]+) ms(?: \/\s*(\d+) runs)?/);
    if (m) {
      t[`${m[1]}_ms`] = Number(m[2]);
      if (m[3] !== undefined) t[`${m[1]}_runs`] = Number(m[3]);
      continue;
    }
    m = line.match(/whisper_print_timings:\s+fallbacks =\s*(\d+) p \/\s*(\d+) h/);
    if (m) {
      t.fallbacks_p = Number(m[1]);
      t.fallbacks_h = Number(m[2]);
    }
  }
  return t;
}
const pick = (re) => (log.match(re) ?? [])[1]?.trim();

const segments = json.transcription.map((s) => ({
  t0_ms: s.offsets.from,
  t1_ms: s.offsets.to,
  text: s.text,
  tokens: (s.tokens ?? []).map((t) => t.id),
}));
const out = {
  text: segments.map((s) => s.text).join(''),
  language: json.result?.language,
  segments,
  threads,
  flash_attn: flashAttn,
  args,
  timings: timings(log),
  whisper_cpp: {
    version: readFileSync(join(here, 'node_modules', 'nodejs-whisper', 'cpp', 'whisper.cpp', 'CMakeLists.txt'), 'utf8').match(/project\("whisper\.cpp" VERSION ([\d.]+)\)/)?.[1],
    package: `nodejs-whisper@${JSON.parse(readFileSync(pkg, 'utf8')).version}`,
    flash_attn_log: pick(/flash attn\s*=\s*(\S+)/),
    system_info: pick(/system_info:\s*(.*)/),
  },
};
process.stdout.write(JSON.stringify(out) + '\n');
