import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { findNatsServer } from '../../control-plane/src/platform/embedded/nats-server.ts';
import { settings } from '../../shared/src/config.ts';
import { agentPresenceTtlMs, streamConfigs } from '../../shared/src/provision.ts';
import { natsNames } from '../../shared/src/subjects.ts';

/**
 * The files of deploy/ parse, point at what exists and use the product's own names: settings,
 * subjects, stream limits. Where the machine has kubectl, docker-compose and nats-server, their
 * own checks run too (`kubectl kustomize`, `docker-compose config -q`, `nats-server -t`).
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const deploy = join(root, 'deploy');

function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path, ext) : ext.test(name) ? [path] : [];
  });
}

type Doc = any;

function yamlDocs(path: string): Doc[] {
  const docs = parseAllDocuments(readFileSync(path, 'utf8'), { merge: true });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const d of list) assert.deepEqual(d.errors.map(String), [], `${relative(root, path)} is valid YAML`);
  return list.map((d) => d.toJS({ maxAliasCount: 1000 })).filter((d) => d !== null);
}

const onPath = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
const knownSettings = new Set(Object.keys(settings));
const names = natsNames('uptime');

describe('deployment files', () => {
  it('parses every YAML file under deploy/', () => {
    const files = filesUnder(deploy, /\.ya?ml$/);
    assert.ok(files.length >= 15, `found ${files.length} YAML files`);
    for (const f of files) yamlDocs(f);
  });

  it('builds one non-root image whose entry point is the uptime command, without nats-server', () => {
    const dockerfile = readFileSync(join(deploy, 'Dockerfile'), 'utf8');
    assert.match(dockerfile, /npm ci --omit=dev/);
    assert.match(dockerfile, /^USER 10001/m);
    assert.match(dockerfile, /^HEALTHCHECK [\s\S]*?\/healthz/m);
    // The image runs the command compiled by its build stage (scripts/build.mjs), not the sources through tsx.
    assert.match(dockerfile, /^RUN node scripts\/build\.mjs$/m);
    assert.match(dockerfile, /^COPY --from=build \/app\/dist \.\/dist$/m);
    assert.match(dockerfile, /^ENTRYPOINT \["node", "--enable-source-maps", "dist\/uptime\.mjs"\]/m);
    assert.ok(existsSync(join(root, 'control-plane/bin/uptime.mjs')));
    assert.doesNotMatch(dockerfile, /install[^\n]*nats-server/, 'nats-server is not in the image');
    // ICMP monitors run the system ping: the image has it, and nothing else from apt.
    assert.match(dockerfile, /apt-get install -y --no-install-recommends iputils-ping \\$/m);
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    assert.ok(pkg.dependencies.tsx, 'tsx is a runtime dependency, so --omit=dev keeps it');
  });

  it('runs a 3-node NATS cluster, Postgres, two control planes and agents in three regions with compose', () => {
    const [compose] = yamlDocs(join(deploy, 'docker-compose.yml'));
    const services = compose.services as Record<string, Doc>;
    for (const n of ['nats-1', 'nats-2', 'nats-3']) {
      assert.deepEqual(services[n].command.slice(0, 2), ['--config', '/etc/nats/cluster.conf']);
      assert.ok(services[n].volumes.some((v: string) => v.startsWith('./nats/cluster.conf:')));
    }
    assert.ok(services.postgres);
    const planes = Object.keys(services).filter((s) => services[s].command?.[0] === 'control-plane');
    assert.equal(planes.length, 2);
    const agents = Object.keys(services).filter((s) => services[s].command?.[0] === 'probe-agent');
    assert.deepEqual(agents.map((s) => services[s].command[2]).sort(), ['ap-south', 'eu-west', 'us-east']);
    for (const s of [...planes, ...agents]) {
      const env = services[s].environment as Record<string, string>;
      assert.equal(env.NATS_REPLICAS, '3', s);
      assert.equal(String(env.NATS_URL).split(',').length, 3, s);
      for (const k of Object.keys(env)) assert.ok(knownSettings.has(k), `${s}: ${k} is a setting`);
    }
    for (const s of agents) assert.ok(services[s].environment.PING_PORT && services[s].environment.AGENT_KEY !== undefined, s);
    for (const s of planes) assert.ok(services[s].environment.SECRET_KEY !== undefined, s);
    if (onPath('docker-compose')) {
      const secrets = { SECRET_KEY: 'x', AGENT_KEY: 'x', POSTGRES_PASSWORD: 'x' };
      const r = spawnSync('docker-compose', ['-f', join(deploy, 'docker-compose.yml'), 'config', '-q'], {
        encoding: 'utf8',
        env: { ...process.env, ...secrets },
      });
      assert.equal(r.status, 0, r.stderr);
    }
  });

  it('publishes only the API to the world: everything else on 127.0.0.1 or not at all, metrics off the public port', () => {
    const [compose] = yamlDocs(join(deploy, 'docker-compose.yml'));
    const services = compose.services as Record<string, Doc>;
    const published: string[] = [];
    for (const [name, svc] of Object.entries(services)) {
      const env = (svc.environment ?? {}) as Record<string, string>;
      for (const p of (svc.ports ?? []) as (string | Doc)[]) {
        const spec = typeof p === 'string' ? p : `${p.host_ip ? `${p.host_ip}:` : ''}${p.published}:${p.target}`;
        const [container] = spec.split(':').slice(-1);
        const isApi = svc.command?.[0] === 'control-plane' && container === String(env.PORT ?? 3000);
        published.push(`${name} ${spec}`);
        if (!isApi)
          assert.match(spec, /^127\.0\.0\.1:/, `${name} publishes ${spec} on every interface: only the control plane's API is public`);
      }
      if (svc.command?.[0] === 'control-plane') {
        // With METRICS_PORT apart from PORT, /metrics leaves the public port for one that is not published.
        assert.ok(env.METRICS_PORT && env.METRICS_PORT !== String(env.PORT ?? 3000), `${name}: METRICS_PORT apart from PORT`);
        assert.ok(
          !published.some((p) => p.startsWith(`${name} `) && p.endsWith(`:${env.METRICS_PORT}`)),
          `${name}: metrics port not published`,
        );
      }
    }
    for (const s of ['postgres', 'nats-1', 'nats-2', 'nats-3']) {
      for (const p of (services[s].ports ?? []) as string[]) assert.match(String(p), /^127\.0\.0\.1:/, `${s} ${p}`);
    }
    assert.ok(
      published.some((p) => /^control-plane-1 (0\.0\.0\.0:)?3000:3000$/.test(p)),
      `the API is published: ${published.join(', ')}`,
    );
  });

  it('fails loudly when a required secret is missing from .env, naming it', () => {
    const text = readFileSync(join(deploy, 'docker-compose.yml'), 'utf8');
    const example = readFileSync(join(deploy, '.env.example'), 'utf8');
    const required = ['SECRET_KEY', 'AGENT_KEY', 'POSTGRES_PASSWORD'];
    for (const v of required) {
      const uses = [...text.matchAll(new RegExp(`\\$\\{${v}([^}]*)\\}`, 'g'))].map((m) => m[1]!);
      assert.ok(uses.length > 0, `${v} is used`);
      for (const u of uses) assert.match(u, /^:\?\S.*\S$/, `\${${v}${u}}: a missing ${v} must stop compose with a message`);
      assert.match(example, new RegExp(`^${v}=$`, 'm'), `.env.example lists ${v}, empty`);
    }
    // No other variable defaults to an empty value that would be taken silently.
    assert.deepEqual(
      [...text.matchAll(/\$\{(\w+):?-\}/g)].map((m) => m[1]),
      [],
    );
    if (onPath('docker-compose')) {
      // An empty env file stands for a .env not filled in (and keeps a developer's deploy/.env out).
      const emptyEnv = join(mkdtempSync(join(tmpdir(), 'compose-env-')), '.env');
      writeFileSync(emptyEnv, '');
      const run = (env: Record<string, string>) =>
        spawnSync('docker-compose', ['-f', join(deploy, 'docker-compose.yml'), '--env-file', emptyEnv, 'config', '-q'], {
          encoding: 'utf8',
          env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', ...env },
        });
      try {
        const missing = run({});
        assert.notEqual(missing.status, 0, 'compose refuses to start without the secrets');
        assert.match(missing.stderr, /SECRET_KEY|AGENT_KEY|POSTGRES_PASSWORD/);
        const filled = run(Object.fromEntries(required.map((v) => [v, 'x'])));
        assert.equal(filled.status, 0, filled.stderr);
      } finally {
        rmSync(dirname(emptyEnv), { recursive: true, force: true });
      }
    }
  });

  it('keeps the Kubernetes Services inside the cluster, secrets required and metrics on a port of their own', () => {
    for (const f of filesUnder(join(deploy, 'k8s'), /\.ya?ml$/)) {
      for (const d of yamlDocs(f)) {
        if (d.kind === 'Service')
          assert.ok(!d.spec.type || d.spec.type === 'ClusterIP', `${relative(root, f)}: ${d.spec.type}: expose through an ingress`);
        for (const c of d.spec?.template?.spec?.containers ?? []) {
          for (const from of c.envFrom ?? [])
            if (from.secretRef) assert.notEqual(from.secretRef.optional, true, `${relative(root, f)}: a missing Secret stops the pod`);
        }
      }
    }
    const [cp] = yamlDocs(join(deploy, 'k8s/base/control-plane/deployment.yaml'));
    const c = cp.spec.template.spec.containers[0];
    const env = Object.fromEntries(c.env.map((e: { name: string; value: string }) => [e.name, e.value]));
    assert.ok(env.METRICS_PORT && env.METRICS_PORT !== env.PORT, 'METRICS_PORT apart from PORT');
    const metricsPort = c.ports.find((p: { containerPort: number }) => String(p.containerPort) === env.METRICS_PORT);
    assert.ok(metricsPort, 'the metrics port is declared for scraping');
    const [svc] = yamlDocs(join(deploy, 'k8s/base/control-plane/service.yaml'));
    assert.ok(
      !svc.spec.ports.some(
        (p: { targetPort: string | number }) => p.targetPort === metricsPort.name || String(p.targetPort) === env.METRICS_PORT,
      ),
      'the Service does not carry metrics',
    );
  });

  it('gives Kubernetes a control plane with probes and a disruption budget, and one agent Deployment per region', () => {
    const manifests = filesUnder(join(deploy, 'k8s'), /\.ya?ml$/).filter(
      (f) => !f.endsWith('kustomization.yaml') && !f.endsWith('nats-values.yaml'),
    );
    for (const f of manifests) {
      for (const d of yamlDocs(f))
        assert.ok(d.apiVersion && d.kind && d.metadata?.name, `${relative(root, f)}: apiVersion, kind, metadata.name`);
    }
    for (const k of filesUnder(join(deploy, 'k8s'), /^kustomization\.yaml$/)) {
      const [kz] = yamlDocs(k);
      for (const r of [...(kz.resources ?? []), ...(kz.components ?? [])])
        assert.ok(existsSync(join(dirname(k), r)), `${relative(root, k)}: ${r} exists`);
    }
    const [cp] = yamlDocs(join(deploy, 'k8s/base/control-plane/deployment.yaml'));
    const c = cp.spec.template.spec.containers[0];
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    assert.equal(c.livenessProbe.httpGet.path, '/healthz');
    assert.equal(cp.spec.template.spec.securityContext.runAsNonRoot, true);
    const [pdb] = yamlDocs(join(deploy, 'k8s/base/control-plane/pdb.yaml'));
    assert.equal(pdb.kind, 'PodDisruptionBudget');
    const secrets = yamlDocs(join(deploy, 'k8s/secrets.example.yaml'));
    assert.deepEqual(secrets.flatMap((s) => Object.keys(s.stringData)).sort(), ['AGENT_KEY', 'DATABASE_URL', 'SECRET_KEY']);
    const [agent] = yamlDocs(join(deploy, 'k8s/base/probe-agent/deployment.yaml'));
    const [cpKustomization] = yamlDocs(join(deploy, 'k8s/base/control-plane/kustomization.yaml'));
    const envNames = [
      ...agent.spec.template.spec.containers[0].env.map((e: { name: string }) => e.name),
      ...c.env.map((e: { name: string }) => e.name),
      ...cpKustomization.configMapGenerator[0].literals.map((l: string) => l.split('=')[0]),
      ...secrets.flatMap((s) => Object.keys(s.stringData)),
    ];
    for (const n of envNames) assert.ok(knownSettings.has(n), `${n} is a setting`);
    const regions = readdirSync(join(deploy, 'k8s/agents'));
    assert.deepEqual(regions.sort(), ['ap-south', 'eu-west', 'us-east']);

    if (onPath('kubectl')) {
      for (const overlay of readdirSync(join(deploy, 'k8s/overlays'))) {
        const r = spawnSync('kubectl', ['kustomize', join(deploy, 'k8s/overlays', overlay)], { encoding: 'utf8' });
        assert.equal(r.status, 0, r.stderr);
        const docs = parseAllDocuments(r.stdout).map((d) => d.toJS() as Doc);
        const deployments = docs.filter((d) => d.kind === 'Deployment').map((d) => d.metadata.name);
        assert.ok(deployments.includes(`probe-agent-${overlay}`), `${overlay}: ${deployments.join(', ')}`);
        const agentArgs = docs.find((d) => d.metadata.name === `probe-agent-${overlay}`).spec.template.spec.containers[0].args;
        assert.deepEqual(agentArgs, ['probe-agent', '--region', overlay]);
      }
    }
  });

  it('configures NATS with JetStream and valid nats-server files', () => {
    const [values] = yamlDocs(join(deploy, 'k8s/nats-values.yaml'));
    assert.equal(values.config.jetstream.enabled, true);
    assert.equal(values.config.jetstream.fileStore.enabled, true);
    assert.equal(values.config.cluster.replicas, 3);
    const confs = filesUnder(join(deploy, 'nats'), /\.conf$/);
    assert.ok(confs.length >= 6);
    const bin = findNatsServer();
    for (const f of confs) {
      const r = spawnSync(bin, ['-t', '-c', f], {
        encoding: 'utf8',
        env: { ...process.env, LEAF_PASSWORD: 'x', HUB_LEAF_URL: 'nats-leaf://region:x@hub.example.net:7422' },
      });
      assert.equal(r.status, 0, `${relative(root, f)}: ${r.stderr}`);
    }
  });

  it('defines the leaf-node streams with the limits and subjects the service uses', () => {
    const product = Object.fromEntries(streamConfigs(names, { replicas: 3 }).map((s) => [s.name, s]));
    const dir = join(deploy, 'nats/leafnodes/streams');
    const read = (side: string, file: string) => JSON.parse(readFileSync(join(dir, side, file), 'utf8')) as Doc;
    for (const [file, stream] of [
      ['uptime_RESULTS.json', names.streams.results],
      ['uptime_PINGS.json', names.streams.pings],
    ] as const) {
      const hub = read('hub', file);
      const p = product[stream]!;
      assert.equal(hub.name, stream);
      assert.deepEqual(hub.subjects, p.subjects);
      for (const k of ['retention', 'storage', 'discard', 'max_age', 'duplicate_window'] as const)
        assert.equal(hub[k], p[k], `${file} ${k}`);
      const regional = read('region', file.replace('.json', '_REGION.json'));
      assert.equal(regional.name, `${stream}_REGION`);
      assert.equal(regional.duplicate_window, p.duplicate_window);
      assert.deepEqual(
        hub.sources.map((s: { name: string }) => s.name),
        ['us-east', 'ap-south'].map((r) => `${stream}_${r}`),
      );
    }
    assert.deepEqual(read('region', 'uptime_RESULTS_REGION.json').subjects, ['uptime.results.REGION.>']);
    assert.deepEqual(read('region', 'uptime_PINGS_REGION.json').subjects, [names.subjects.pings]);
    const agents = read('hub', 'KV_uptime_agents.json');
    assert.equal(agents.name, `KV_${names.buckets.agents}`);
    assert.equal(agents.max_age, agentPresenceTtlMs * 1_000_000);
    for (const b of [names.buckets.assignments, names.buckets.heartbeats]) {
      const mirror = read('region', `KV_${b}.json`);
      assert.deepEqual(mirror.mirror, { name: `KV_${b}`, external: { api: '$JS.hub.API' } });
    }
  });
});
