import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort } from '../../control-plane/src/platform/embedded/ports.ts';
import { Pool } from 'undici';
import { findBinary, processCpuUs, versionOf } from './proc.ts';

export type Blackbox = { url: string; pid: number; version: string; stop(): Promise<void> };
export type ProbeRun = { probes: number; failures: number; wallMs: number; cpuUs: number };

export const blackboxHint = 'apt-get install prometheus-blackbox-exporter (or set BLACKBOX_EXPORTER_BIN)';

export function findBlackbox(): string | undefined {
  return (
    findBinary('prometheus-blackbox-exporter', ['/usr/bin/prometheus-blackbox-exporter'], process.env.BLACKBOX_EXPORTER_BIN) ??
    findBinary('blackbox_exporter')
  );
}

/** Prometheus blackbox_exporter on loopback with one http_2xx module trusting caFile. */
export async function startBlackbox(bin: string, dir: string, caFile: string): Promise<Blackbox> {
  const config = join(dir, 'blackbox.yml');
  writeFileSync(
    config,
    [
      'modules:',
      '  http_2xx:',
      '    prober: http',
      '    timeout: 10s',
      '    http:',
      '      preferred_ip_protocol: ip4',
      '      ip_protocol_fallback: false',
      '      tls_config:',
      `        ca_file: ${caFile}`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const child = spawn(bin, [`--config.file=${config}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let tail = '';
  child.stderr!.on('data', (c: Buffer) => (tail = (tail + c.toString()).slice(-2000)));
  const exited = once(child, 'exit');
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`blackbox_exporter exited at start:\n${tail}`);
    const ok = await fetch(`${url}/-/healthy`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`blackbox_exporter not ready within 15 s:\n${tail}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: child.pid!,
    version: versionOf(bin, ['--version'], /version (\S+)/),
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Asks blackbox_exporter to probe target `count` times, `concurrency` at once, as Prometheus
 * scrapes would; its CPU is read from /proc around the measured probes.
 */
export async function probeLoop(bb: Blackbox, target: string, count: number, concurrency: number, maxMs: number): Promise<ProbeRun> {
  const pool = new Pool(bb.url, { connections: concurrency });
  const path = `/probe?module=http_2xx&target=${encodeURIComponent(target)}`;
  let issued = 0;
  let failures = 0;
  const deadline = performance.now() + maxMs;
  const worker = async () => {
    while (issued < count && performance.now() < deadline) {
      issued++;
      try {
        const { body } = await pool.request({ method: 'GET', path });
        if (!/^probe_success 1$/m.test(await body.text())) failures++;
      } catch {
        failures++;
      }
    }
  };
  const cpu0 = processCpuUs(bb.pid);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - t0;
  const cpuUs = processCpuUs(bb.pid) - cpu0;
  await pool.close();
  return { probes: issued, failures, wallMs, cpuUs };
}
