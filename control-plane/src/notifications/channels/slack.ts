import { z } from 'zod';
import { render } from '../content.ts';
import { httpUrl, toneIcon, type ChannelSpec } from './types.ts';

const SlackConfig = z.strictObject({ url: httpUrl.describe('Write-only: the incoming-webhook URL (it holds the token).') });

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** Block Kit: a header, the message, the facts as fields, the project as context. */
export function slackMessage(n: Parameters<typeof render>[0]) {
  const r = render(n);
  const title = `${toneIcon[r.tone]} ${r.title}`;
  return {
    text: cut(`${title}: ${r.text}`, 3000),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: cut(title, 150), emoji: true } },
      { type: 'section', text: { type: 'mrkdwn', text: cut(esc(r.text), 3000) } },
      ...(r.fields.length > 0
        ? [
            {
              type: 'section',
              fields: r.fields.slice(0, 10).map((f) => ({ type: 'mrkdwn', text: cut(`*${esc(f.label)}*\n${esc(f.value)}`, 2000) })),
            },
          ]
        : []),
      { type: 'context', elements: [{ type: 'mrkdwn', text: cut(esc(r.footer), 3000) }] },
    ],
  };
}

export const slack: ChannelSpec<typeof SlackConfig> = {
  type: 'slack',
  config: SlackConfig,
  secrets: ['url'],
  create: ({ http }) => ({
    async send({ notification, config }) {
      await http.post(config.url, { json: slackMessage(notification) });
    },
  }),
};
