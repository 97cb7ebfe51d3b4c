// Builds whisper.cpp's whisper-cli from the source the nodejs-whisper
// package carries (node_modules/nodejs-whisper/cpp/whisper.cpp), as
// nodejs-whisper itself does on first use: npm ci runs it (postinstall).
// The build lives in node_modules/.boxd-whisper-cpp, so npm ci starts it
// afresh and git never sees it.
//
// On x86-64 it targets x86-64-v3 (AVX2, FMA, F16C, BMI2), the level boxd's
// own ggml is built for (CGO_CFLAGS -march=x86-64-v3), so that timings
// compare like with like; BOXD_WHISPERCPP_NATIVE=1 builds for this CPU
// instead (-march=native: AVX-512 where there is one). CPU only.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const src = join(here, 'node_modules', 'nodejs-whisper', 'cpp', 'whisper.cpp');
const out = join(here, 'node_modules', '.boxd-whisper-cpp');
const build = join(out, 'build');
const cli = join(build, 'bin', 'whisper-cli');

// npm install --package-lock-only runs this too, with nothing installed.
if (process.env.npm_config_package_lock_only === 'true') {
  process.exit(0);
}

const native = process.env.BOXD_WHISPERCPP_NATIVE === '1' || process.arch !== 'x64';
const flags = [
  '-DCMAKE_BUILD_TYPE=Release',
  '-DBUILD_SHARED_LIBS=OFF',
  '-DWHISPER_BUILD_TESTS=OFF',
  '-DWHISPER_BUILD_SERVER=OFF',
  '-DWHISPER_SDL2=OFF',
  '-DWHISPER_CURL=OFF',
  '-DGGML_CCACHE=OFF',
  native ? '-DGGML_NATIVE=ON' : '-DGGML_NATIVE=OFF',
  ...(native ? [] : ['-DGGML_SSE42=ON', '-DGGML_AVX=ON', '-DGGML_AVX2=ON', '-DGGML_FMA=ON', '-DGGML_F16C=ON', '-DGGML_BMI2=ON']),
];
const stamp = join(out, 'stamp');
const want = JSON.stringify({ src: readFileSync(join(src, 'CMakeLists.txt'), 'utf8').match(/project\("whisper\.cpp" VERSION ([\d.]+)\)/)?.[1], flags });

if (existsSync(cli) && existsSync(stamp) && readFileSync(stamp, 'utf8') === want) {
  process.exit(0);
}
for (const tool of ['cmake', 'c++']) {
  try {
    execFileSync(tool, ['--version'], { stdio: 'ignore' });
  } catch {
    console.error(`build.mjs: ${tool} is missing: whisper.cpp cannot be built (apt-get install cmake g++)`);
    process.exit(1);
  }
}
mkdirSync(build, { recursive: true });
const run = (args) => execFileSync('cmake', args, { stdio: ['ignore', 'ignore', 'inherit'] });
console.log(`build.mjs: building whisper-cli (${native ? 'native' : 'x86-64-v3'}) in ${build}`);
run(['-S', src, '-B', build, ...flags]);
run(['--build', build, '--target', 'whisper-cli', '-j', String(availableParallelism())]);
writeFileSync(stamp, want);
