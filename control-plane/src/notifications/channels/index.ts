import type { IntegrationType } from '../../../../shared/src/contracts/notify.ts';
import { discord } from './discord.ts';
import { email } from './email.ts';
import { ntfy } from './ntfy.ts';
import { pagerduty } from './pagerduty.ts';
import { slack } from './slack.ts';
import { teams } from './teams.ts';
import { telegram } from './telegram.ts';
import type { Channel, ChannelDeps, ChannelSpec } from './types.ts';
import { webhook } from './webhook.ts';

/** Every integration type: its settings, which of them are secret, and how it sends. */
export const channelSpecs: Record<IntegrationType, ChannelSpec> = { webhook, slack, discord, teams, telegram, email, pagerduty, ntfy };

export type Channels = Record<IntegrationType, Channel<Record<string, unknown>>>;

export function createChannels(deps: ChannelDeps): Channels {
  return Object.fromEntries(Object.entries(channelSpecs).map(([type, spec]) => [type, spec.create(deps)])) as Channels;
}
