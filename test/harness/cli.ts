import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testEnv } from './env.ts';

export const uptimeBin = fileURLToPath(new URL('../../control-plane/bin/uptime.mjs', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The last non-empty stdout line. */
  lastLine: string;
}

/** Environment of a fresh machine: the caller's, less every setting of the product. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of [
    'DATABASE_URL',
    'NATS_URL',
    'NATS_NAMESPACE',
    'PORT',
    'HOST',
    'DATA_DIR',
    'PUBLIC_URL',
    'REGION',
    'AGENT_PORT',
    'LOG_LEVEL',
  ]) {
    delete env[k];
  }
  return { ...env, ...extra };
}

const logDir = process.env[testEnv.logDir];
let children = 0;

/**
 * Copies a child's log output into the run's log directory, searched for secrets after the run.
 * One-shot commands print their result (a new token, say) on stdout and log on stderr, so only
 * their stderr is a log; servers log on stdout.
 */
function captureLogs(...streams: (NodeJS.ReadableStream | null)[]): void {
  if (!logDir) return;
  const file = join(logDir, `child-${process.pid}-${++children}.log`);
  for (const s of streams) s?.on('data', (c: Buffer) => appendFileSync(file, c));
}

/** Runs `uptime <args>` to completion. */
export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [uptimeBin, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    captureLogs(child.stderr);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const lines = stdout.split('\n').filter((l) => l.trim());
      resolve({ code, stdout, stderr, lastLine: lines.at(-1) ?? '' });
    });
  });
}

/** Starts `uptime <args>` and resolves once a stdout line matches `ready`. */
export function startCli(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  timeoutMs = 30_000,
): Promise<{ child: ChildProcess; output: () => string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [uptimeBin, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  captureLogs(child.stdout, child.stderr);
  let out = '';
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`not ready within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (c: Buffer) => {
      out += c.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve({ child, output: () => out, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before it was ready:\n${out}`));
    });
  });
}
