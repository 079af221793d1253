import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
};

export const productName = 'uptime';
export const version = pkg.version;
export const userAgent = `${productName}-probe/${version}`;
