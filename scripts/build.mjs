#!/usr/bin/env node
// `node scripts/build.mjs [--if-stale]` (`npm run build`): compiles the `uptime` command
// (control-plane/src/cli/main.ts and everything it imports) into dist/, so a command starts
// without compiling TypeScript. Run by `npm ci` (postinstall), by `npm start` and `npm run uptime`
// when a source changed (scripts/run.mjs), and by the image build. Packages stay in node_modules
// (imported, not bundled).
//
// Each command's code sits in a chunk loaded when the command runs, so `uptime --help` loads
// commander and little else. Files read at run time beside a source (migrations, dashboard
// assets, package.json) are found from the source's place in the repository: each
// `import.meta.url` is rewritten to the source file's URL, computed from the chunk's own.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, relative, sep } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { distDir, distIsFresh, entryFile, fingerprint, manifestFile, root } from './dist.mjs';

const main = `${root}control-plane/src/cli/main.ts`;

const ownFileUrls = {
  name: 'own-file-urls',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const fromDist = relative(distDir, args.path).split(sep).join('/');
      return { contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(fromDist)}, import.meta.url).href`), loader: 'ts' };
    });
  },
};

/** Compiles dist/ from the sources as they are (scripts/run.mjs calls this when dist/ is stale). */
export async function buildDist() {
  const startedAt = Date.now();
  const t0 = performance.now();
  const { build } = await import('esbuild');
  const result = await build({
    absWorkingDir: root,
    entryPoints: { uptime: main },
    outdir: distDir,
    outExtension: { '.js': '.mjs' },
    chunkNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    legalComments: 'none',
    metafile: true,
    write: false,
    logLevel: 'warning',
    plugins: [ownFileUrls],
  });

  // Chunks first, the entry and the manifest last, each written whole then renamed into place: a
  // command started meanwhile runs the previous build or this one, never half of one.
  mkdirSync(distDir, { recursive: true });
  const written = new Set([basename(manifestFile)]);
  const outputs = result.outputFiles.sort((a, b) => Number(a.path.startsWith(entryFile)) - Number(b.path.startsWith(entryFile)));
  for (const file of outputs) {
    const tmp = `${file.path}.${process.pid}.tmp`;
    writeFileSync(tmp, file.contents);
    renameSync(tmp, file.path);
    written.add(basename(file.path));
  }

  const inputs = {};
  for (const file of [...Object.keys(result.metafile.inputs), 'scripts/build.mjs', 'scripts/dist.mjs']) {
    const st = statSync(`${root}${file}`);
    // A file saved while the build read it may not be in the bundle: recorded as stale.
    inputs[file] = st.mtimeMs >= startedAt ? [0, -1] : fingerprint(st);
  }
  const tmp = `${manifestFile}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ builtAt: new Date(startedAt).toISOString(), inputs }, null, 1));
  renameSync(tmp, manifestFile);

  for (const name of readdirSync(distDir)) {
    if (!written.has(name) && !name.endsWith('.tmp')) rmSync(`${distDir}${name}`, { force: true });
  }
  const files = Object.keys(inputs).length;
  process.stderr.write(`uptime: compiled ${files} files into dist/ in ${Math.round(performance.now() - t0)} ms\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (!existsSync(main)) {
    // An image's dependency stage installs before the sources are copied; its build stage compiles.
    process.stderr.write('uptime: no sources here yet, nothing to compile\n');
  } else if (!process.argv.includes('--if-stale') || !distIsFresh()) {
    await buildDist();
  }
}
