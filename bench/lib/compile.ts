/**
 * A bench script compiled as the service ships its code: scripts/build.mjs bundles the `uptime`
 * command with esbuild, and agents run that JavaScript. tsx, which runs bench scripts otherwise,
 * compiles with esbuild's keepNames, which wraps every function a check creates in a `__name`
 * call the shipped agent never makes; a part that weighs our code against a bare library loop
 * runs the compiled form so it weighs what ships.
 */
import { mkdirSync } from 'node:fs';
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { benchDir } from './result.ts';
import { scriptPath } from './child.ts';

/** Each source's `import.meta.url` stays its own file's URL, wherever the bundle is written. */
const ownFileUrls: Plugin = {
  name: 'own-file-urls',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      const { readFile } = await import('node:fs/promises');
      const source = await readFile(args.path, 'utf8');
      return { contents: source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' };
    });
  },
};

/**
 * Compiles a bench script (a path relative to bench/) with what it imports of ours into one ES
 * module under node_modules/.cache/uptime-bench/ (packages stay imported); returns its path relative
 * to bench/, for runScript with `compiled: true`.
 */
export async function compileScript(relativeToBench: string): Promise<string> {
  // Beside the packages it imports (resolved from node_modules), apart from dist/, which the
  // service's build owns and prunes.
  const outDir = `${benchDir}/../node_modules/.cache/uptime-bench`;
  mkdirSync(outDir, { recursive: true });
  const outfile = `${outDir}/${relativeToBench.replace(/[/\\]/g, '-').replace(/\.ts$/, '.mjs')}`;
  await build({
    entryPoints: [scriptPath(relativeToBench)],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
    plugins: [ownFileUrls],
  });
  return relative(benchDir, outfile);
}
