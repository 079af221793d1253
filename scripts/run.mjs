#!/usr/bin/env node
// `npm start` and `npm run uptime -- <command>`: compiles dist/ when a source changed since the
// last build, then runs the command from it, in this process. No shell stands between npm and
// the service, so Ctrl-C reaches a process that stops in order and exits 0.
import { distIsFresh, entryFile } from './dist.mjs';

if (!distIsFresh()) {
  const { buildDist } = await import('./build.mjs');
  await buildDist();
}
process.setSourceMapsEnabled(true);
await import(entryFile);
