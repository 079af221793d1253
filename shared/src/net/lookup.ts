import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isBlockedAddress } from './address.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address of a host name. */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

/** getaddrinfo, so /etc/hosts applies as it does for every other program on the host. */
export const systemResolve: Resolve = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export interface AddressPolicy {
  /** BLOCK_PRIVATE_TARGETS. */
  blockPrivateTargets: boolean;
  /** Exact addresses exempt from the block (a private service an operator means to reach). */
  allowedAddresses?: readonly string[];
}

export class BlockedAddressError extends Error {
  readonly code = 'ERR_BLOCKED_TARGET';
  constructor(readonly address: string) {
    super(`address ${address} is not allowed (BLOCK_PRIVATE_TARGETS)`);
    this.name = 'BlockedAddressError';
  }
}

/** The policy the settings give: BLOCK_PRIVATE_TARGETS, less ALLOWED_PRIVATE_TARGETS. */
export function addressPolicy(config: { BLOCK_PRIVATE_TARGETS: boolean; ALLOWED_PRIVATE_TARGETS: readonly string[] }): AddressPolicy {
  return { blockPrivateTargets: config.BLOCK_PRIVATE_TARGETS, allowedAddresses: config.ALLOWED_PRIVATE_TARGETS };
}

/** Whether the policy forbids connecting to `ip`. */
export function refuses(policy: AddressPolicy, ip: string): boolean {
  return policy.blockPrivateTargets && !(policy.allowedAddresses ?? []).includes(ip) && isBlockedAddress(ip);
}

/**
 * The addresses of a name that a connection may use: all of them, or a BlockedAddressError when
 * any is forbidden (a name answering with one inside address among outside ones is how a
 * rebinding attack looks, so the whole name is refused).
 */
export async function resolveAllowed(policy: AddressPolicy, resolve: Resolve, hostname: string): Promise<ResolvedAddress[]> {
  const found = await resolve(hostname);
  const blocked = found.find((a) => refuses(policy, a.address));
  if (blocked) throw new BlockedAddressError(blocked.address);
  return found;
}

/**
 * A `lookup` for sockets (net, tls, undici's connector) that applies the policy to the addresses
 * actually dialled, so a DNS answer cannot smuggle in an internal address between a check and the
 * connection.
 */
export function guardedLookup(policy: AddressPolicy, resolve: Resolve = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    resolveAllowed(policy, resolve, hostname).then(
      (found) => {
        const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
        const usable = family === 0 ? found : found.filter((a) => a.family === family);
        const first = usable[0];
        if (!first) {
          const err: NodeJS.ErrnoException = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
          return callback(err, '', 0);
        }
        if (options.all) return callback(null, usable);
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}
