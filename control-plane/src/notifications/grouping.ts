/**
 * The grouping rule (ADR 0030): the monitors' changes of a project that groups alerts are held
 * from the first one for the project's window, then sent together. A change joins a group still
 * open when it is routed if it occurred before the group's release and at most one window before
 * the group's first change: changes of one storm reach the router out of their own order (each is
 * dated from the start of its failing run, and confirmed at its own pace), so one that occurred a
 * moment before the group's first still belongs to it. Otherwise it opens a group that releases a
 * window after it. Decided from the event's own occurred_at.
 */
export function groupRelease(f: { occurredAt: number; windowMs: number; openReleases: readonly number[] }): number {
  const open = f.openReleases.filter((r) => r - 2 * f.windowMs <= f.occurredAt && f.occurredAt < r).sort((a, b) => a - b);
  return open[0] ?? f.occurredAt + f.windowMs;
}

/** How a released group is sent to one integration. */
export type GroupDelivery =
  /** One event only, or a channel that pairs each down with its up (PagerDuty): each on its own. */
  | { mode: 'single' }
  /** Two or more: one message listing them. */
  | { mode: 'grouped' };

export function groupDelivery(f: { members: number; integrationType: string }): GroupDelivery {
  if (f.members < 2 || f.integrationType === 'pagerduty') return { mode: 'single' };
  return { mode: 'grouped' };
}
