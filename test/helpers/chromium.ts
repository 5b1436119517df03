// Headless Chromium for tests that look at a picture (test/memory-plan.test.ts):
// find Debian's `chromium` (or chromium-browser, google-chrome) on PATH; where
// none is, install Debian's package when that can succeed without a prompt
// (root, apt-get present, JAXON_TEST_INSTALL_CHROMIUM not 0), as the test
// setup the project's machines expect; otherwise say why, so the test that
// needs it is skipped with that reason. JAXON_TEST_CHROMIUM=<command> picks
// the browser instead. Also a small PNG decoder (node's
// zlib) to look at a screenshot's pixels, and a run helper with a timeout.
import { spawnSync } from 'node:child_process';

const CANDIDATES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', 'command -v "$1"', 'sh', command], { encoding: 'utf8' }).status === 0;
}

/** Installs Debian's chromium when it can be done non-interactively; returns why not, or null once installed. */
function installChromium(): string | null {
  if (process.env.JAXON_TEST_INSTALL_CHROMIUM === '0') return 'JAXON_TEST_INSTALL_CHROMIUM=0';
  if (process.platform !== 'linux') return `no automatic install on ${process.platform}`;
  if (process.getuid?.() !== 0) return 'not root, so apt-get install cannot run without a prompt';
  if (!onPath('apt-get')) return 'apt-get not found';
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { encoding: 'utf8', env, timeout: 600_000 });
  let r = install();
  if (r.status !== 0) {
    // the package lists may be missing or stale on a fresh machine
    spawnSync('apt-get', ['update'], { encoding: 'utf8', env, timeout: 300_000 });
    r = install();
  }
  if (r.status !== 0) return `apt-get install -y chromium failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr || r.stdout || '').trim().split('\n').slice(-2).join(' ')}`;
  return null;
}

let found: { command: string | null; reason: string } | undefined;

/** The headless browser's command, or null with the reason there is none (installing Debian's chromium first where possible). */
export function findChromium(): { command: string | null; reason: string } {
  if (found) return found;
  // JAXON_TEST_CHROMIUM names the browser to use (and nothing is installed)
  const chosen = process.env.JAXON_TEST_CHROMIUM;
  if (chosen) {
    found = onPath(chosen) ? { command: chosen, reason: '' } : { command: null, reason: `JAXON_TEST_CHROMIUM=${chosen} is not a command here` };
    return found;
  }
  const look = () => CANDIDATES.find(onPath) ?? null;
  let command = look();
  let reason = '';
  if (!command) {
    const why = installChromium();
    command = look();
    if (!command) reason = `no chromium, chromium-browser or google-chrome on PATH, and installing Debian's chromium did not work: ${why ?? 'installed, yet not on PATH'}`;
  }
  found = { command, reason };
  return found;
}

/** Chromium's flags for a headless run as root in a container (no sandbox, no GPU, no first-run chatter). */
export const HEADLESS_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--hide-scrollbars', '--mute-audio'];

/** Runs chromium with `args`; its stdout, stderr and exit code. */
export function runChromium(command: string, args: string[], userDataDir: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(command, [...HEADLESS_FLAGS, `--user-data-dir=${userDataDir}`, ...args], { encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: `${r.stderr ?? ''}${r.error ? ` (${r.error.message})` : ''}` };
}

export interface DecodedPng {
  width: number;
  height: number;
  /** RGBA, 8 bits a channel, row by row */
  pixels: Uint8Array;
}

/** Decodes a non-interlaced 8-bit RGB or RGBA PNG (what Chromium's screenshots are) with zlib. */
export async function decodePng(bytes: Uint8Array): Promise<DecodedPng> {
  const { inflateSync } = await import('node:zlib');
  const signature = [137, 80, 78, 71, 13, 10, 26, 10];
  if (bytes.length < 8 || signature.some((b, i) => bytes[i] !== b)) throw new Error('decodePng: not a PNG (bad signature)');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let width = 0;
  let height = 0;
  let colorType = -1;
  const idat: Uint8Array[] = [];
  for (let at = 8; at + 8 <= bytes.length;) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    const data = bytes.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      const depth = data[8]!;
      colorType = data[9]!;
      if (depth !== 8 || (colorType !== 2 && colorType !== 6) || data[12] !== 0) throw new Error(`decodePng: only 8-bit non-interlaced RGB/RGBA, got depth ${depth}, color type ${colorType}, interlace ${data[12]}`);
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    at += 12 + length;
  }
  const channels = colorType === 6 ? 4 : 3;
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = new Uint8Array(width * height * 4);
  let previous = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? row[i - channels]! : 0;
      const b = previous[i]!;
      const c = i >= channels ? previous[i - channels]! : 0;
      let predictor: number;
      switch (filter) {
        case 0: predictor = 0; break;
        case 1: predictor = a; break;
        case 2: predictor = b; break;
        case 3: predictor = (a + b) >> 1; break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: throw new Error(`decodePng: bad filter ${filter} on row ${y}`);
      }
      row[i] = (line[i]! + predictor) & 255;
    }
    for (let x = 0; x < width; x++) {
      for (let ch = 0; ch < 4; ch++) pixels[(y * width + x) * 4 + ch] = ch < channels ? row[x * channels + ch]! : 255;
    }
    previous = row;
  }
  return { width, height, pixels };
}
