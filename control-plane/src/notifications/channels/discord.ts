import { z } from 'zod';
import { render } from '../content.ts';
import { httpUrl, toneIcon, type ChannelSpec } from './types.ts';

const DiscordConfig = z.strictObject({ url: httpUrl.describe('Write-only: the Discord webhook URL (it holds the token).') });

const colors = { down: 0xe01e5a, up: 0x2eb67d, info: 0x5865f2 } as const;
const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** One embed: title, message, facts as inline fields, colour by state; mentions disabled. */
export function discordMessage(n: Parameters<typeof render>[0]) {
  const r = render(n);
  return {
    username: 'uptime',
    allowed_mentions: { parse: [] },
    embeds: [
      {
        title: cut(`${toneIcon[r.tone]} ${r.title}`, 256),
        description: cut(r.text, 4096),
        color: colors[r.tone],
        fields: r.fields.slice(0, 25).map((f) => ({ name: cut(f.label, 256), value: cut(f.value, 1024), inline: true })),
        ...(r.link ? { url: r.link } : {}),
        timestamp: n.occurred_at,
        footer: { text: cut(`Project ${n.project.name}`, 2048) },
      },
    ],
  };
}

export const discord: ChannelSpec<typeof DiscordConfig> = {
  type: 'discord',
  config: DiscordConfig,
  secrets: ['url'],
  create: ({ http }) => ({
    async send({ notification, config }) {
      await http.post(config.url, { json: discordMessage(notification) });
    },
  }),
};
