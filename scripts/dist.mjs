// Where the compiled `uptime` command lives and whether it still matches the sources.
// Read by the `uptime` bin on every run, so it only stats files: no esbuild, no hashing.
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));
export const distDir = fileURLToPath(new URL('../dist/', import.meta.url));
export const entryFile = `${distDir}uptime.mjs`;
export const manifestFile = `${distDir}build.json`;

/** What a file looked like when it was compiled: a source edited or checked out since differs. */
export const fingerprint = (st) => [Math.round(st.mtimeMs), st.size];

/**
 * True when dist/ was built from the files as they are now: every input the build read (sources
 * and this build's own scripts) has the modification time and size recorded in dist/build.json.
 * A new source file changes nothing until an existing one imports it, which is an edit.
 */
export function distIsFresh() {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    statSync(entryFile);
  } catch {
    return false;
  }
  for (const [file, [mtime, size]] of Object.entries(manifest.inputs ?? {})) {
    let st;
    try {
      st = statSync(`${root}${file}`);
    } catch {
      return false;
    }
    const [m, s] = fingerprint(st);
    if (m !== mtime || s !== size) return false;
  }
  return Object.keys(manifest.inputs ?? {}).length > 0;
}
