import type { DomainEvent } from '../../../shared/src/contracts/events.ts';
import { nameUuid } from '../../../shared/src/name-uuid.ts';
import { integrationFailing } from '../alerts/rules.ts';
import type { Db } from '../platform/db/sql.ts';
import { formatTimestamp } from '../platform/http/time.ts';
import { recordEvent } from '../platform/outbox.ts';
import { notificationFromEvent } from './content.ts';
import { insertDeliveries, projectNames } from './repo.ts';

interface Run {
  project_id: string;
  name: string;
  type: string;
  failures: number;
  failing_since: string;
  failing_alerted_at: string | null;
}

/**
 * A failed attempt of this integration, counted in the transaction that records the attempt's
 * outcome. When the run of failures meets the rule (alerts/rules.ts, integrationFailing), the
 * project's other integrations are told once: an `integration.failing` event (its id named by the
 * run, so a repeat adds nothing) with their deliveries. The event, if recorded.
 */
export async function noteFailure(tx: Db, integrationId: string, error: string, now: Date): Promise<DomainEvent | null> {
  const [run] = await tx<Run[]>`
    update integrations set failures = failures + 1, failing_since = coalesce(failing_since, ${now}), last_failure = ${error}
    where id = ${integrationId}
    returning project_id, name, type, failures, failing_since, failing_alerted_at`;
  if (!run) return null;
  const since = formatTimestamp(run.failing_since);
  const failing = integrationFailing(
    { failures: run.failures, failingSince: Date.parse(since), alerted: run.failing_alerted_at !== null },
    now.getTime(),
  );
  if (!failing) return null;
  await tx`update integrations set failing_alerted_at = ${now} where id = ${integrationId}`;
  return tellOthers(tx, integrationId, run, {
    id: nameUuid(`uptime-integration-failing:${integrationId}:${since}`),
    kind: 'integration.failing',
    occurred_at: now.toISOString(),
    data: { type: run.type, failures: run.failures, failing_since: since, last_error: error },
  });
}

/**
 * A delivered attempt ends the integration's run of failures; when the project was told of the
 * run, it is told the integration delivers again (`integration.recovered`). Only called for an
 * integration that had failures when the delivery was claimed.
 */
export async function noteSuccess(tx: Db, integrationId: string, now: Date): Promise<DomainEvent | null> {
  const [run] = await tx<Run[]>`
    with before as (select id, failing_since, failing_alerted_at from integrations where id = ${integrationId} and failures > 0 for update)
    update integrations i set failures = 0, failing_since = null, failing_alerted_at = null, last_failure = null
    from before where i.id = before.id
    returning i.project_id, i.name, i.type, 0 as failures, before.failing_since, before.failing_alerted_at`;
  if (!run || run.failing_alerted_at === null) return null;
  const since = formatTimestamp(run.failing_since);
  return tellOthers(tx, integrationId, run, {
    id: nameUuid(`uptime-integration-recovered:${integrationId}:${since}`),
    kind: 'integration.recovered',
    occurred_at: now.toISOString(),
    data: { type: run.type, failing_since: since },
  });
}

async function tellOthers(
  tx: Db,
  integrationId: string,
  run: Run,
  e: Pick<DomainEvent, 'id' | 'kind' | 'occurred_at' | 'data'>,
): Promise<DomainEvent | null> {
  const [seen] = await tx`select 1 from outbox_events where id = ${e.id}`;
  if (seen) return null;
  const event = await recordEvent(
    tx,
    { ...e, project_id: run.project_id, subject: { type: 'integration', id: integrationId, name: run.name } },
    { alert: false },
  );
  const names = await projectNames(tx, [run.project_id]);
  const project = names.get(run.project_id);
  if (project === undefined) return event;
  const others = await tx<{ id: string }[]>`
    select id from integrations where project_id = ${run.project_id} and active and id <> ${integrationId} order by created_at, id`;
  const payload = notificationFromEvent(event, { id: run.project_id, name: project });
  await insertDeliveries(
    tx,
    others.map((o) => ({
      event_id: event.id,
      integration_id: o.id,
      project_id: run.project_id,
      trigger_id: null,
      kind: event.kind,
      payload,
    })),
  );
  return event;
}
