import { ConfigError } from '../../../shared/src/config.ts';
import { NatsServerMissingError } from '../platform/embedded/nats-server.ts';
import { AppError } from '../platform/errors.ts';
import { MissingSecretKeyError } from '../runtime/keys.ts';
import { PortTakenError } from './ports.ts';

/** What a failed command prints: the message alone for mistakes a user can fix, the stack otherwise. */
export function describeError(err: unknown): string {
  if (err instanceof ConfigError || err instanceof NatsServerMissingError || err instanceof MissingSecretKeyError) return err.message;
  if (err instanceof PortTakenError) return err.message;
  if (err instanceof AppError) return `error: ${err.message}`;
  return `error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`;
}
