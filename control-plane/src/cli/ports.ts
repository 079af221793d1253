import type { Config } from '../../../shared/src/config.ts';
import { listenError } from '../platform/embedded/ports.ts';

/** A port a server command is about to listen on, with the setting that names it. */
export interface PortUse {
  variable: 'PORT' | 'METRICS_PORT' | 'AGENT_PORT' | 'PING_PORT';
  port: number;
}

export class PortTakenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PortTakenError';
  }
}

/**
 * The ports a process will listen on: the API on PORT, /metrics on METRICS_PORT (when set apart
 * from PORT, or the only listener of a control plane without the api role), a probe agent's
 * AGENT_PORT and PING_PORT.
 */
export function portsInUse(
  config: Pick<Config, 'PORT' | 'METRICS_PORT' | 'AGENT_PORT' | 'PING_PORT'>,
  run: { api: boolean; controlPlane: boolean; agent: boolean },
): PortUse[] {
  const uses: PortUse[] = [];
  if (run.api) uses.push({ variable: 'PORT', port: config.PORT });
  if (run.controlPlane && (!run.api || config.METRICS_PORT !== config.PORT)) {
    uses.push({ variable: config.METRICS_PORT === config.PORT ? 'PORT' : 'METRICS_PORT', port: config.METRICS_PORT });
  }
  if (run.agent) uses.push({ variable: 'AGENT_PORT', port: config.AGENT_PORT }, { variable: 'PING_PORT', port: config.PING_PORT });
  return uses;
}

/** Two settings naming one port: the process would fight itself for it. */
export function clash(uses: readonly PortUse[]): string | undefined {
  for (const [i, a] of uses.entries()) {
    const b = uses.slice(i + 1).find((u) => u.port === a.port);
    if (b) return `${a.variable} and ${b.variable} are both ${a.port}: set one of them to another port`;
  }
  return undefined;
}

/** What to print when a port cannot be had: one line naming the setting to change. */
export function portTakenMessage(use: PortUse, host: string, code: string | undefined): string {
  const where = `port ${use.port} (${use.variable}) on ${host}`;
  if (code === 'EACCES') return `${where} needs privileges this user lacks: set ${use.variable} to a port above 1023`;
  if (code === 'EADDRNOTAVAIL') return `${where} cannot be opened, ${host} is not an address of this machine: set HOST`;
  return `${where} is already in use: stop what listens there, or set ${use.variable} to a free port (e.g. ${use.variable}=${use.port + 10})`;
}

/**
 * Checks every port before anything slow starts (Postgres, NATS, migrations), so a taken port
 * is reported at once, in one line, instead of as a stack trace once the rest is up.
 */
export async function checkPorts(uses: readonly PortUse[], host: string): Promise<void> {
  const twice = clash(uses);
  if (twice) throw new PortTakenError(twice);
  const codes = await Promise.all(uses.map((u) => listenError(u.port, host)));
  const taken = uses.findIndex((_, i) => codes[i] !== undefined);
  if (taken !== -1) throw new PortTakenError(portTakenMessage(uses[taken]!, host, codes[taken]));
}
