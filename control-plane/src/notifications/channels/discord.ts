import { z } from 'zod';
import type { Notification } from '../../../../shared/src/contracts/notify.ts';
import { compose, escapeMarkdown, type MessageTemplate } from '../templates.ts';
import { actionLinks, channel, httpUrl, jsonPost, postAll, toneIcon, type ChannelSpec } from './types.ts';

const DiscordConfig = z.strictObject({ url: httpUrl.describe('Write-only: the Discord webhook URL (it holds the token).') });

const colors = { down: 0xe01e5a, up: 0x2eb67d, info: 0x5865f2 } as const;
const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * One embed: title, message, facts as inline fields, colour by state; mentions disabled. The
 * action links are link buttons (style 5) in one action row. The standard wording goes as it is
 * (as it always has); a template's values are escaped so they never become markdown.
 */
export function discordMessage(n: Notification, template?: MessageTemplate | null) {
  const m = compose(n, template);
  const r = m.r;
  const links = actionLinks(n);
  return {
    username: 'uptime',
    allowed_mentions: { parse: [] },
    embeds: [
      {
        title: cut(`${toneIcon[r.tone]} ${template?.title ? m.title(escapeMarkdown) : r.title}`, 256),
        description: cut(template?.body ? m.text(escapeMarkdown) : r.text, 4096),
        color: colors[r.tone],
        fields: r.fields.slice(0, 25).map((f) => ({ name: cut(f.label, 256), value: cut(f.value, 1024), inline: true })),
        ...(r.link ? { url: r.link } : {}),
        timestamp: n.occurred_at,
        footer: { text: cut(`Project ${n.project.name}`, 2048) },
      },
    ],
    ...(links.length > 0
      ? { components: [{ type: 1, components: links.map((l) => ({ type: 2, style: 5, label: l.label, url: l.url })) }] }
      : {}),
  };
}

/**
 * A webhook that no application owns drops `components` unless the URL asks for them with
 * `with_components=true` (Discord's execute-webhook documentation); link buttons are the
 * non-interactive components such a webhook may send.
 */
export function withComponents(url: string): string {
  // Appended as text: the stored URL stays as it was given, byte for byte.
  const [base = '', fragment] = url.split('#', 2);
  if (/[?&]with_components=/.test(base)) return url;
  return `${base}${base.includes('?') ? '&' : '?'}with_components=true${fragment !== undefined ? `#${fragment}` : ''}`;
}

export const discord: ChannelSpec<typeof DiscordConfig> = {
  type: 'discord',
  config: DiscordConfig,
  secrets: ['url'],
  create: ({ http }) =>
    channel({
      build: ({ notification, config, template }) => {
        const body = discordMessage(notification, template);
        return [jsonPost('components' in body ? withComponents(config.url) : config.url, body)];
      },
      transmit: (out) => postAll(http, out),
    }),
};
