import type { AgentPresence } from '../../../shared/src/contracts/agent.ts';
import type { Logger } from '../../../shared/src/logger.ts';
import type { Checker } from '../check/check.ts';

export type CanaryReport = NonNullable<AgentPresence['canaries']>;

export type CanariesOptions = {
  urls: readonly string[];
  checker: Pick<Checker, 'run'>;
  intervalMs: number;
  /** Seconds a canary check may take. */
  timeoutMs?: number;
  log: Logger;
  now?: () => number;
};

export type Canaries = {
  /** The last round's counts, undefined before the first round ends (or without canaries). */
  report(): CanaryReport | undefined;
  stop(): void;
};

/** Any HTTP answer shows the network works: the canary's status code does not matter. */
const anyStatus = Array.from({ length: 500 }, (_, i) => 100 + i);

/**
 * Checks the agent's canaries (CANARY_URLS) every interval, all at once, and keeps the counts
 * the agent's presence carries to the control plane, which sets a region's results aside while
 * most of its agents cannot reach most of their canaries (docs/adr/0028-verdicts-across-regions.md).
 */
export function startCanaries(opts: CanariesOptions): Canaries {
  const now = opts.now ?? Date.now;
  let last: CanaryReport | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const abort = new AbortController();

  const round = async () => {
    const outcomes = await Promise.all(
      opts.urls.map((url) =>
        opts.checker.run(
          {
            url,
            method: 'GET',
            valid_http_codes: anyStatus,
            basic_auth_username: null,
            basic_auth_password: null,
            timeout_ms: opts.timeoutMs ?? 5_000,
            follow_redirects: false,
          },
          abort.signal,
        ),
      ),
    );
    if (stopped) return;
    const failing = outcomes.filter((o) => !o.ok).length;
    if ((last?.failing ?? 0) !== failing) {
      const failed = opts.urls.filter((_, i) => !outcomes[i]!.ok);
      if (failing > 0) opts.log.warn({ failing, total: opts.urls.length, failed }, 'canaries unreachable');
      else opts.log.info({ total: opts.urls.length }, 'canaries reachable again');
    }
    last = { total: opts.urls.length, failing, checked_at: new Date(now()).toISOString() };
  };
  const loop = () => {
    if (stopped) return;
    round()
      .catch((err: unknown) => opts.log.error({ err }, 'canary round failed'))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, opts.intervalMs);
      });
  };
  if (opts.urls.length > 0) loop();
  return {
    report: () => last,
    stop() {
      stopped = true;
      clearTimeout(timer);
      abort.abort();
    },
  };
}
