import { availableParallelism, cpus, freemem, loadavg, release, totalmem, type } from 'node:os';

export type MachineInfo = {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  freeMemoryGiB: number;
  os: string;
  node: string;
  /** 1-minute load average when the part started: other work on a shared machine shows here. */
  loadAtStart: number;
};

export function machineInfo(): MachineInfo {
  const gib = (b: number) => Math.round((b / 2 ** 30) * 10) / 10;
  return {
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: gib(totalmem()),
    freeMemoryGiB: gib(freemem()),
    os: `${type()} ${release()}`,
    node: process.version,
    loadAtStart: Math.round(loadavg()[0]! * 100) / 100,
  };
}
