import { spawn, spawnSync } from 'node:child_process';

export interface PromtoolResult {
  code: number | null;
  output: string;
}

/**
 * Prometheus's own linter and rule tester, from Debian's `prometheus` package. The tests that use
 * it fail rather than skip when it is missing: CI installs it (`.ci/run`), so a skip would only
 * hide a broken CI machine.
 */
export function requirePromtool(): string {
  const probe = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error('promtool is not installed: `apt-get install -y prometheus` (Debian) provides it; .ci/run installs it when missing');
  }
  return 'promtool';
}

/** Runs `promtool <args>`, feeding `stdin` when given. */
export function promtool(args: string[], stdin?: string): Promise<PromtoolResult> {
  const bin = requirePromtool();
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.end(stdin ?? '');
  });
}

/** `promtool check metrics` over one scrape: the exposition format and Prometheus's naming rules. */
export async function checkMetrics(exposition: string): Promise<PromtoolResult> {
  if (!/^# TYPE /m.test(exposition)) throw new Error(`not a Prometheus exposition:\n${exposition.slice(0, 500)}`);
  return promtool(['check', 'metrics'], exposition);
}
