import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A test certificate authority that issues server certificates with chosen names and dates. */
export interface TestPki {
  /** The CA certificate (PEM): give it to the checker as an extra trusted root. */
  caPem: string;
  /** A key and certificate for `hosts` (DNS names or IP addresses), valid between the dates given. */
  issue(opts: { hosts: string[]; notBefore?: Date; notAfter?: Date }): { key: string; cert: string };
  /** A certificate for `hosts` signed by itself (an untrusted chain). */
  selfSigned(hosts: string[]): { key: string; cert: string };
  close(): void;
}

const openssl = (dir: string, args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });

/** openssl ca's date form: YYYYMMDDHHMMSSZ. */
const stamp = (d: Date) => `${d.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;

const san = (hosts: string[]) => hosts.map((h) => (/^[\d.]+$|:/.test(h) ? `IP:${h}` : `DNS:${h}`)).join(',');

export function createTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'uptime-pki-'));
  openssl(
    dir,
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem'].concat([
      '-days',
      '3650',
      '-subj',
      '/CN=Uptime Test CA',
    ]),
  );
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '1000\n');
  writeFileSync(
    join(dir, 'ca.cnf'),
    [
      '[ca]',
      'default_ca = test',
      '[test]',
      `dir = ${dir}`,
      'database = $dir/index.txt',
      'serial = $dir/serial',
      'new_certs_dir = $dir',
      'default_md = sha256',
      'policy = any',
      'unique_subject = no',
      'copy_extensions = none',
      '[any]',
      'commonName = supplied',
    ].join('\n'),
  );
  let n = 0;
  return {
    caPem: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    issue({ hosts, notBefore = new Date(Date.now() - 86_400_000), notAfter = new Date(Date.now() + 90 * 86_400_000) }) {
      const name = `leaf${++n}`;
      openssl(
        dir,
        ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`].concat([
          '-subj',
          `/CN=${hosts[0] ?? 'localhost'}`,
        ]),
      );
      writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${san(hosts)}\nextendedKeyUsage=serverAuth\n`);
      openssl(
        dir,
        ['ca', '-batch', '-config', 'ca.cnf', '-keyfile', 'ca.key', '-cert', 'ca.pem', '-in', `${name}.csr`, '-out', `${name}.pem`].concat([
          '-startdate',
          stamp(notBefore),
          '-enddate',
          stamp(notAfter),
          '-extfile',
          `${name}.ext`,
          '-notext',
        ]),
      );
      return { key: readFileSync(join(dir, `${name}.key`), 'utf8'), cert: readFileSync(join(dir, `${name}.pem`), 'utf8') };
    },
    selfSigned(hosts) {
      const name = `self${++n}`;
      openssl(
        dir,
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-nodes',
          '-keyout',
          `${name}.key`,
          '-out',
          `${name}.pem`,
        ].concat(['-days', '30', '-subj', `/CN=${hosts[0] ?? 'localhost'}`, '-addext', `subjectAltName=${san(hosts)}`]),
      );
      return { key: readFileSync(join(dir, `${name}.key`), 'utf8'), cert: readFileSync(join(dir, `${name}.pem`), 'utf8') };
    },
    close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
