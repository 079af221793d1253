import type { Metrics } from '../../../shared/src/metrics.ts';
import type { Ownership } from '../assignments/ownership.ts';
import type { ResultPublisher } from '../results/publisher.ts';

/** The agent's own gauges and counters, read from its parts at each scrape. */
export function registerAgentMetrics(
  metrics: Metrics,
  from: { publisher: Pick<ResultPublisher, 'stats'>; ownership: Pick<Ownership, 'stats'> },
): void {
  const { publisher, ownership } = from;
  metrics.gauge('uptime_agent_results_buffered', 'Results waiting to be published (NATS away or slow).', () => publisher.stats().buffered);
  metrics.counter('uptime_agent_results_dropped_total', 'Results dropped because the buffer was full.', () => publisher.stats().dropped);
  metrics.counter('uptime_agent_results_published_total', 'Results published.', () => publisher.stats().published);
  metrics.counter(
    'uptime_agent_publish_failures_total',
    'Publish attempts that failed or timed out (NATS away, a stream leader election).',
    () => publisher.stats().failures,
  );
  metrics.gauge('uptime_agent_monitors_assigned', 'Monitors assigned to this region.', () => ownership.stats().assigned);
  metrics.gauge('uptime_agent_monitors_owned', 'Monitors this agent checks.', () => ownership.stats().owned);
}
