import { z } from 'zod';
import type { Notification } from '../../../../shared/src/contracts/notify.ts';
import { compose, escapeAngles, type MessageTemplate } from '../templates.ts';
import { actionLinks, channel, httpUrl, jsonPost, postAll, toneIcon, type ChannelSpec } from './types.ts';

const SlackConfig = z.strictObject({ url: httpUrl.describe('Write-only: the incoming-webhook URL (it holds the token).') });

const esc = (s: string) => escapeAngles(s, 'text');
const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * Block Kit: a header, the message, the facts as fields, the action links as buttons (link
 * buttons need no Slack app: a click opens the URL), the project as context.
 */
export function slackMessage(n: Notification, template?: MessageTemplate | null) {
  const m = compose(n, template);
  const r = m.r;
  const title = `${toneIcon[r.tone]} ${m.title()}`;
  const links = actionLinks(n);
  return {
    text: cut(`${title}: ${m.text()}`, 3000),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: cut(title, 150), emoji: true } },
      { type: 'section', text: { type: 'mrkdwn', text: cut(m.text(escapeAngles), 3000) } },
      ...(r.fields.length > 0
        ? [
            {
              type: 'section',
              fields: r.fields.slice(0, 10).map((f) => ({ type: 'mrkdwn', text: cut(`*${esc(f.label)}*\n${esc(f.value)}`, 2000) })),
            },
          ]
        : []),
      ...(links.length > 0
        ? [
            {
              type: 'actions',
              elements: links.map((l) => ({
                type: 'button',
                action_id: l.key,
                text: { type: 'plain_text', text: l.label },
                url: l.url,
                ...(l.key === 'acknowledge' ? { style: 'primary' } : {}),
              })),
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
  create: ({ http }) =>
    channel({
      build: ({ notification, config, template }) => [jsonPost(config.url, slackMessage(notification, template))],
      transmit: (out) => postAll(http, out),
    }),
};
