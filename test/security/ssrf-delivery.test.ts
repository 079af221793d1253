import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { IntegrationType } from '../../shared/src/contracts/notify.ts';
import type { Resolve } from '../../shared/src/net/lookup.ts';
import { createHttpClient, type HttpOptions } from '../../control-plane/src/notifications/channels/http.ts';
import { channelSpecs, createChannels } from '../../control-plane/src/notifications/channels/index.ts';
import { DeliveryError } from '../../control-plane/src/notifications/errors.ts';
import { startNotifyRole, type NotifyRole } from '../../control-plane/src/notifications/role.ts';
import { apiClient, type Call } from '../harness/api.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { quietLog } from '../harness/db.ts';
import { createAccount, type TestAccount } from '../harness/factories.ts';
import { startTarget, startWebhookSink, type Target } from '../harness/http.ts';
import { eventually } from '../harness/streams.ts';
import { startSmtpSink, type SmtpSink } from '../notify/smtp.ts';

/**
 * With BLOCK_PRIVATE_TARGETS on, no integration reaches an internal address: not by an address
 * in its URL, not by a name that resolves inside (resolved by a resolver the test hands the HTTP
 * client, the seam getaddrinfo sits behind), not by a redirect (never followed), not by the
 * SMTP server of an email integration. The refusal is permanent and names the host, never the
 * URL's secret part. Receivers are real HTTP and SMTP servers on 127.0.0.1.
 */
const SECRET_PATH = 'hooks-secret-path-7f3a9c';

/** Names a tenant might register to point inside. */
const dns: Record<string, string[]> = {
  'metadata.example.test': ['169.254.169.254'],
  'metadata6.example.test': ['fd00:ec2::254'],
  'loopback.example.test': ['127.0.0.1'],
  'private.example.test': ['10.1.2.3'],
  'mapped.example.test': ['::ffff:169.254.169.254'],
  // One public answer and one inside: how DNS rebinding looks.
  'mixed.example.test': ['93.184.215.14', '192.168.1.10'],
  'hooks.example.test': ['127.0.0.1'],
};
const resolve: Resolve = async (hostname) => {
  const found = dns[hostname];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

/** A config of each HTTP type whose every request goes to `base`, with a secret in the path where the type has one. */
function configFor(type: IntegrationType, base: string): Record<string, unknown> {
  const configs: Record<string, Record<string, unknown>> = {
    webhook: { url: `${base}/${SECRET_PATH}` },
    slack: { url: `${base}/services/T0/B0/${SECRET_PATH}` },
    discord: { url: `${base}/api/webhooks/1/${SECRET_PATH}` },
    teams: { url: `${base}/webhookb2/${SECRET_PATH}` },
    telegram: { bot_token: '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw', chat_id: '1', api_base_url: base },
    pagerduty: { routing_key: 'R0123456789abcdefghijklmnopqrstu', events_url: `${base}/v2/enqueue` },
    ntfy: { server: base, topic: 'ops' },
  };
  return configs[type]!;
}
const httpTypes = Object.keys(channelSpecs).filter((t) => t !== 'email') as IntegrationType[];

const notification = {
  id: randomUUID(),
  event: 'integration.test',
  message: 'hello',
  occurred_at: new Date().toISOString(),
  project: { id: randomUUID(), name: 'P' },
  subject: { type: 'integration', id: randomUUID(), name: 'I' },
  data: {},
} as const;

function channelsWith(opts: Partial<HttpOptions> = {}) {
  const http = createHttpClient({ blockPrivateTargets: true, resolve, timeoutMs: 5_000, ...opts });
  return { http, channels: createChannels({ http, smtp: { url: undefined, from: 'uptime@example.test' }, now: () => new Date() }) };
}

async function send(
  channels: ReturnType<typeof channelsWith>['channels'],
  type: IntegrationType,
  config: Record<string, unknown>,
): Promise<DeliveryError | undefined> {
  try {
    await channels[type].send({
      id: randomUUID(),
      attempt: 1,
      notification: notification as never,
      integration: { id: randomUUID(), name: 'I' },
      config: channelSpecs[type].config.parse(config),
    });
    return undefined;
  } catch (err) {
    assert.ok(err instanceof DeliveryError, String(err));
    return err;
  }
}

function assertRefused(err: DeliveryError | undefined, what: string, address: string): void {
  assert.ok(err, `${what} was delivered`);
  assert.equal(err.permanent, true, `${what}: ${err.message}`);
  assert.match(err.message, /is not allowed \(BLOCK_PRIVATE_TARGETS\)/, what);
  assert.ok(err.message.includes(address), `${what}: ${err.message} should name ${address}`);
  assert.ok(
    !err.message.includes(SECRET_PATH) && !err.message.includes('AAHdqTcv') && !err.message.includes('R0123456789'),
    `${what}: ${err.message}`,
  );
}

describe('deliveries to internal addresses', () => {
  let sink: Target;
  let port: string;
  before(async () => {
    sink = await startWebhookSink();
    port = new URL(sink.url).port;
  });
  after(() => sink.close());

  it('refuses loopback, private, link-local and metadata addresses given in the URL, on every HTTP channel', async () => {
    const { http, channels } = channelsWith();
    const literals: [string, string][] = [
      [`http://127.0.0.1:${port}`, '127.0.0.1'],
      [`http://[::1]:${port}`, '::1'],
      ['http://10.0.0.1', '10.0.0.1'],
      ['http://172.16.5.4', '172.16.5.4'],
      ['http://192.168.0.1', '192.168.0.1'],
      ['http://100.64.0.1', '100.64.0.1'],
      ['http://169.254.169.254', '169.254.169.254'],
      ['http://[fd00:ec2::254]', 'fd00:ec2::254'],
      ['http://[fe80::1]', 'fe80::1'],
      // Other spellings the URL parser turns into the same addresses.
      ['http://[::ffff:169.254.169.254]', '::ffff:a9fe:a9fe'],
      ['http://2852039166', '169.254.169.254'],
      ['http://0x7f.1', '127.0.0.1'],
      ['http://0.0.0.0', '0.0.0.0'],
    ];
    for (const type of httpTypes) {
      for (const [base, address] of literals) assertRefused(await send(channels, type, configFor(type, base)), `${type} ${base}`, address);
    }
    await http.close();
    assert.equal(sink.requests.length, 0);
  });

  it('refuses a name that resolves to an internal address, checked on the address dialled', async () => {
    const { http, channels } = channelsWith();
    for (const type of httpTypes) {
      for (const [name, addresses] of Object.entries(dns).filter(([n]) => n !== 'hooks.example.test')) {
        const internal = addresses.find((a) => !a.startsWith('93.'))!;
        assertRefused(await send(channels, type, configFor(type, `http://${name}:${port}`)), `${type} ${name}`, internal);
      }
    }
    await http.close();
    assert.equal(sink.requests.length, 0);
  });

  it('delivers through the same resolver to an address the operator exempts (the seam is real)', async () => {
    const { http, channels } = channelsWith({ allowedAddresses: ['127.0.0.1'] });
    for (const type of httpTypes)
      assert.equal(await send(channels, type, configFor(type, `http://hooks.example.test:${port}`)), undefined, type);
    await http.close();
    assert.equal(sink.requests.length, httpTypes.length);
  });

  it('does not follow a redirect, to an internal address or anywhere else', async () => {
    const second = await startWebhookSink();
    const first = await startTarget({ status: 302, headers: { location: `${second.url}/elsewhere` } });
    try {
      const { http, channels } = channelsWith({ allowedAddresses: ['127.0.0.1'] });
      for (const location of [
        `${second.url}/elsewhere`,
        'http://169.254.169.254/latest/meta-data/',
        'http://[fd00:ec2::254]/latest/meta-data/',
      ]) {
        for (const status of [301, 302, 303, 307, 308]) {
          first.respond({ status, headers: { location } });
          for (const type of httpTypes) {
            const err = await send(channels, type, configFor(type, first.url));
            assert.ok(err, `${type} ${status} was taken as delivered`);
            assert.equal(err.permanent, true);
            assert.match(err.message, new RegExp(`HTTP ${status} from 127\\.0\\.0\\.1:\\d+: redirects are not followed`));
          }
        }
      }
      await http.close();
      assert.equal(second.requests.length, 0, 'the redirect was followed');
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('email to an internal SMTP server', () => {
  let smtp: SmtpSink;
  before(async () => {
    smtp = await startSmtpSink();
  });
  after(() => smtp.close());

  const emailTo = async (smtpUrl: string | undefined, opts: { operatorSmtp?: string; allowedAddresses?: string[] } = {}) => {
    const http = createHttpClient({
      blockPrivateTargets: true,
      resolve,
      timeoutMs: 5_000,
      ...(opts.allowedAddresses ? { allowedAddresses: opts.allowedAddresses } : {}),
    });
    const channels = createChannels({ http, smtp: { url: opts.operatorSmtp, from: 'uptime@example.test' }, now: () => new Date() });
    try {
      await send(channels, 'email', { recipients: ['ops@example.test'], ...(smtpUrl ? { smtp_url: smtpUrl } : {}) }).then((err) => {
        if (err) throw err;
      });
      return undefined;
    } catch (err) {
      return err as DeliveryError;
    } finally {
      await http.close();
    }
  };

  it("refuses a tenant's SMTP server at an internal address or behind a name that resolves inside", async () => {
    const port = new URL(smtp.url).port;
    for (const [url, address] of [
      [`smtp://127.0.0.1:${port}`, '127.0.0.1'],
      [`smtp://user:${SECRET_PATH}@[::1]:${port}`, '::1'],
      [`smtps://metadata.example.test:${port}`, '169.254.169.254'],
      [`smtp://user:${SECRET_PATH}@loopback.example.test:${port}`, '127.0.0.1'],
      [`smtp://mixed.example.test:${port}`, '192.168.1.10'],
    ] as const) {
      assertRefused(await emailTo(url), url.replace(SECRET_PATH, '…'), address);
    }
    assert.equal(smtp.messages.length, 0);
  });

  it("sends through a tenant's server by the checked address, and through the operator's SMTP_URL as configured", async () => {
    const port = new URL(smtp.url).port;
    assert.equal(await emailTo(`smtp://hooks.example.test:${port}`, { allowedAddresses: ['127.0.0.1'] }), undefined);
    assert.equal(await emailTo(undefined, { operatorSmtp: smtp.url }), undefined, "the operator's relay on localhost is theirs to choose");
    await smtp.waitForMessages(2);
  });
});

describe('blocked deliveries through the control plane', () => {
  let cp: TestControlPlane;
  let ada: TestAccount;
  let api: Call;
  let role: NotifyRole;
  let sink: Target;
  before(async () => {
    cp = await startTestControlPlane({ roles: ['api'], env: { BLOCK_PRIVATE_TARGETS: 'true' } });
    ada = await createAccount(cp.db.sql);
    api = apiClient(cp.url, ada.token);
    sink = await startWebhookSink();
    role = await startNotifyRole({
      sql: cp.db.sql,
      log: quietLog,
      config: cp.config,
      keys: cp.cp.keys,
      backoffBaseMs: 50,
      pollMs: 100,
    });
  });
  after(async () => {
    await role.stop();
    await sink.close();
    await cp.stop();
  });

  const targets = () => {
    const port = new URL(sink.url).port;
    return [
      `http://169.254.169.254`,
      `http://[fd00:ec2::254]`,
      `http://localhost:${port}`,
      `http://[::ffff:127.0.0.1]:${port}`,
      `http://10.0.0.8`,
    ];
  };

  it('answers the integration test endpoint with a permanent refusal, recorded in the delivery log without the secret', async () => {
    for (const base of targets()) {
      for (const type of httpTypes) {
        const created = await api('POST', '/integrations', {
          project_id: ada.project_id,
          name: `${type} inside`,
          type,
          config: configFor(type, base),
        });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        const id = created.body.data.id;
        const res = await api('POST', `/integrations/${id}/test`);
        assert.equal(res.status, 200);
        assert.equal(res.body.data.delivered, false, `${type} ${base}`);
        assert.equal(res.body.data.retryable, false, `${type} ${base}`);
        assert.match(res.body.data.error, /is not allowed \(BLOCK_PRIVATE_TARGETS\)/, `${type} ${base}`);
        const log = await api('GET', `/integrations/${id}/deliveries`);
        const [entry] = log.body.data;
        assert.equal(entry.status, 'dead');
        assert.match(entry.last_error, /is not allowed \(BLOCK_PRIVATE_TARGETS\)/);
        assert.ok(!JSON.stringify(log.body).includes(SECRET_PATH), `${type} ${base}: the log shows the secret`);
      }
    }
    assert.equal(sink.requests.length, 0);
  });

  it("dead-letters a trigger's deliveries to internal addresses at once, saying why", async () => {
    const ids = [];
    for (const base of targets()) {
      ids.push(
        (
          await api('POST', '/integrations', {
            project_id: ada.project_id,
            name: 'hook',
            type: 'webhook',
            config: { url: `${base}/${SECRET_PATH}` },
          })
        ).body.data.id,
      );
    }
    const trigger = (
      await api('POST', '/triggers', { project_id: ada.project_id, name: 'Inside', default_message: 'm', integration_ids: ids })
    ).body.data;
    assert.equal((await fetch(`${cp.url}/api/notify/${trigger.id}`, { method: 'POST' })).status, 202);
    const rows = await eventually(async () => {
      const r = await cp.db.sql<
        { status: string; attempts: number; last_error: string | null }[]
      >`select status, attempts, last_error from deliveries where trigger_id = ${trigger.id}`;
      return r.length === ids.length && r.every((d) => d.status === 'dead') && r;
    }, 'the deliveries to be dead-lettered');
    for (const r of rows) {
      assert.equal(r.attempts, 1, 'a refusal is not retried');
      assert.match(r.last_error!, /is not allowed \(BLOCK_PRIVATE_TARGETS\)/);
      assert.ok(!r.last_error!.includes(SECRET_PATH));
    }
    assert.equal(sink.requests.length, 0);
  });
});
