#!/usr/bin/env node
// Run by `npm install` / `npm ci` (postinstall): repairs two defects of the Postgres driver,
// postgres.js 3.4.9 (the latest release), that a database restart or failover sets off. Found by
// the reliability suite (test/reliability/postgres-outage.test.ts); upstream reports:
// porsager/postgres#1154 and #1208, fixes proposed in #1168 and #1209, not released.
//
// 1. A crash. After a connection's socket closed, a query written on it anyway (the ROLLBACK of
//    a transaction that was running) schedules a write for the next tick, and that write
//    dereferences the null socket: a TypeError thrown from a timer, which ends the process.
//    Fixed: such a write rejects the connection's queries with CONNECTION_CLOSED instead.
// 2. A poisoned pool slot. Closing cancels a scheduled write without forgetting it, so the
//    reconnected connection never schedules another one: its start-up message is never sent and
//    every query given to it waits for connect_timeout, then fails, for the life of the process.
//    Fixed: closing forgets the scheduled write and the bytes it held.
//
// Each edit is applied once (a marker says so). When the driver's code no longer has the shape
// these edits expect (a new release), this fails loudly instead of leaving the defects in:
// check whether the release fixes them, then update or remove this file.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../node_modules/postgres/', import.meta.url));
const marker = '/* uptime: patched (patches/postgres.mjs) */';

const edits = [
  {
    find: '  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)\n',
    replace:
      '  function nextWrite(fn) {\n' +
      `    ${marker}\n` +
      '    if (socket === null) {\n' +
      '      nextWriteTimer !== null && clearImmediate(nextWriteTimer)\n' +
      '      chunk = nextWriteTimer = null\n' +
      "      error(Errors.connection('CONNECTION_CLOSED', options))\n" +
      '      return false\n' +
      '    }\n' +
      '    const x = socket.write(chunk, fn)\n',
  },
  {
    find: '    clearImmediate(nextWriteTimer)\n    if (socket) {\n',
    replace: '    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n    if (socket) {\n',
  },
  {
    find: "    clearImmediate(nextWriteTimer)\n    socket.removeListener('data', data)\n",
    replace: "    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n    socket.removeListener('data', data)\n",
  },
];

if (!existsSync(root)) process.exit(0); // not installed (yet): nothing to repair

const problems = [];
for (const file of ['src/connection.js', 'cjs/src/connection.js', 'cf/src/connection.js']) {
  const path = root + file;
  if (!existsSync(path)) continue;
  let text = readFileSync(path, 'utf8');
  if (text.includes(marker)) continue;
  for (const e of edits) {
    if (text.split(e.find).length !== 2) {
      problems.push(`${file}: expected code not found once:\n${e.find}`);
      continue;
    }
    text = text.replace(e.find, e.replace);
  }
  writeFileSync(path, text);
}
if (problems.length > 0) {
  const { version } = JSON.parse(readFileSync(root + 'package.json', 'utf8'));
  process.stderr.write(`patches/postgres.mjs: postgres ${version} is not the driver this repairs.\n${problems.join('\n')}\n`);
  process.exit(1);
}
