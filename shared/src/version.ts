import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
  license: string;
};

export const productName = 'uptime';
export const version = pkg.version;
/** SPDX identifier of the licence, as the API document states it. */
export const license = pkg.license;
export const userAgent = `${productName}-probe/${version}`;
