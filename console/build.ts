import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync, brotliCompressSync } from 'node:zlib';
import { build } from 'esbuild';

// Bundles the console (console/src, Preact) into one script and one style
// sheet named by their content's hash, each also compressed (gzip, brotli),
// with a manifest the server reads (src/http/console.ts). Run by
// `npm install` (prepare), `npm run build`, and by the server at start-up
// when the bundle is missing. The bundle is never committed.

const HERE = dirname(fileURLToPath(import.meta.url));
export const DEFAULT_OUT_DIR = join(HERE, 'bundle');

export interface ConsoleManifest {
  script: string;
  style: string;
}

/**
 * Builds into a fresh folder beside `outDir` and swaps it in, so a reader
 * never sees half a bundle; when another build (a second server starting)
 * swapped its own in first, that one stays.
 */
export async function buildConsole(outDir = DEFAULT_OUT_DIR): Promise<ConsoleManifest> {
  const target = resolve(outDir);
  const staging = `${target}.${process.pid}.${randomBytes(6).toString('hex')}`;
  mkdirSync(staging, { recursive: true });
  try {
    const result = await build({
      entryPoints: { console: join(HERE, 'src/main.tsx') },
      bundle: true,
      minify: true,
      format: 'esm',
      target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
      jsx: 'automatic',
      jsxImportSource: 'preact',
      entryNames: '[name]-[hash]',
      outdir: staging,
      metafile: true,
      legalComments: 'none',
      logLevel: 'silent',
    });
    const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
    const script = outputs.find((name) => name.endsWith('.js'));
    const style = outputs.find((name) => name.endsWith('.css'));
    if (!script || !style) throw new Error(`console build made ${outputs.join(', ')}; expected a script and a style sheet`);
    for (const name of [script, style]) {
      const body = readFileSync(join(staging, name));
      writeFileSync(join(staging, `${name}.gz`), gzipSync(body, { level: 9 }));
      writeFileSync(join(staging, `${name}.br`), brotliCompressSync(body));
    }
    const manifest: ConsoleManifest = { script, style };
    writeFileSync(join(staging, 'manifest.json'), `${JSON.stringify(manifest)}\n`);
    rmSync(target, { recursive: true, force: true });
    mkdirSync(dirname(target), { recursive: true });
    try {
      renameSync(staging, target);
    } catch (err) {
      if (!existsSync(join(target, 'manifest.json'))) throw err;
      rmSync(staging, { recursive: true, force: true });
      return JSON.parse(readFileSync(join(target, 'manifest.json'), 'utf8')) as ConsoleManifest;
    }
    return manifest;
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = process.argv[2] ?? DEFAULT_OUT_DIR;
  buildConsole(outDir).then(
    (manifest) => process.stdout.write(`console bundle: ${join(outDir, manifest.script)}, ${manifest.style}\n`),
    (err: Error) => {
      process.stderr.write(`console build failed: ${err.message}\n`);
      process.exit(1);
    },
  );
}
