import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactUrl } from '../../shared/src/request-log.ts';

const t = `uptt_${'A1b2-C3d4_'.repeat(4)}xyz`;

describe('the URL a request line shows', () => {
  const rows: [string, string][] = [
    ['/api/notify/abc', '/api/notify/abc'],
    ['/api/notify/abc?message=Deployed+v1', '/api/notify/abc?message=Deployed+v1'],
    ['/api/notify/abc?token=s3cr3t', '/api/notify/abc?token=[redacted]'],
    ['/api/notify/abc?message=hi&token=s3cr3t&x=1', '/api/notify/abc?message=hi&token=[redacted]&x=1'],
    ['/api/notify/abc?%74oken=s3cr3t', '/api/notify/abc?%74oken=[redacted]'],
    ['/api/notify/abc?%2574oken=s3cr3t', '/api/notify/abc?%2574oken=[redacted]'],
    ['/api/notify/abc?TOKEN=s3cr3t', '/api/notify/abc?TOKEN=[redacted]'],
    ['/api/notify/abc?+token+=s3cr3t', '/api/notify/abc?+token+=[redacted]'],
    ['/api/notify/abc?token[]=s3cr3t', '/api/notify/abc?token[]=[redacted]'],
    ['/api/notify/abc?token%5B%5D=s3cr3t', '/api/notify/abc?token%5B%5D=[redacted]'],
    ['/api/notify/abc?x=1;token=s3cr3t', '/api/notify/abc?x=1;token=[redacted]'],
    ['/api/notify/abc;token=s3cr3t', '/api/notify/abc;token=[redacted]'],
    ['/api/notify/abc/?token=s3cr3t', '/api/notify/abc/?token=[redacted]'],
    ['//api/notify/abc?token=s3cr3t', '//api/notify/abc?token=[redacted]'],
    ['/API/NOTIFY/ABC?Token=s3cr3t', '/API/NOTIFY/ABC?Token=[redacted]'],
    ['/x?y=1#token=s3cr3t', '/x?y=1#token=[redacted]'],
    [
      '/x?access_token=a&api_key=b&password=c&_csrf=d&client_secret=e',
      '/x?access_token=[redacted]&api_key=[redacted]&password=[redacted]&_csrf=[redacted]&client_secret=[redacted]',
    ],
    ['/x?tok%ZZen=s3cr3t', '/x?tok%ZZen=s3cr3t'],
    ['/x?%ff%fe=1', '/x?%ff%fe=1'],
    [`/x?message=${t}`, '/x?message=[redacted]'],
    [`/x?${t}`, '/x?[redacted]'],
    [`/api/notify/abc/${t}`, '/api/notify/abc/[redacted]'],
    [`/x?m=${t.replace('t', '%74')}`, '/x?m=[redacted]'],
    ['', ''],
  ];
  for (const [url, shown] of rows) {
    it(`shows ${JSON.stringify(url)} as ${JSON.stringify(shown)}`, () => assert.equal(redactUrl(url), shown));
  }
});
