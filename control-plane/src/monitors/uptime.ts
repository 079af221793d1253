/**
 * Uptime over a window, from the seconds of it spent inside incidents: what a monitor's `uptime`
 * and the dashboard's 24 h / 7 d / 30 d figures say. A window of no length (a monitor created
 * this instant) is 100 %. Percent, 3 decimals.
 */
export function uptimePercent(downSeconds: number, windowSeconds: number): number {
  const uptime = windowSeconds > 0 ? Math.max(0, 100 * (1 - downSeconds / windowSeconds)) : 100;
  return Math.round(uptime * 1000) / 1000;
}
