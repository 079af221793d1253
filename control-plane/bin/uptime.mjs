#!/usr/bin/env node
// The `uptime` command. It runs the compiled build in dist/ (scripts/build.mjs) when that was
// built from the sources as they are now, and the TypeScript sources through tsx otherwise: an
// edited source is run as edited, and a fresh build starts in a fraction of the time.
import { distIsFresh, entryFile } from '../../scripts/dist.mjs';

if (distIsFresh()) {
  process.setSourceMapsEnabled(true);
  await import(entryFile);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
