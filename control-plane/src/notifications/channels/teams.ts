import { z } from 'zod';
import type { Notification } from '../../../../shared/src/contracts/notify.ts';
import { compose, escapeMarkdown, type MessageTemplate } from '../templates.ts';
import { actionLinks, channel, httpUrl, jsonPost, postAll, toneIcon, type ChannelSpec } from './types.ts';

const TeamsConfig = z.strictObject({
  url: httpUrl.describe('Write-only: the Teams incoming-webhook or workflow URL (it holds the token).'),
});

const colors = { down: 'attention', up: 'good', info: 'accent' } as const;

/**
 * An Adaptive Card (what both Teams workflows and the older connectors accept). The action links
 * are `Action.OpenUrl` buttons, before the link to the monitored URL.
 */
export function teamsMessage(n: Notification, template?: MessageTemplate | null) {
  const m = compose(n, template);
  const r = m.r;
  const actions = [
    ...actionLinks(n).map((l) => ({ type: 'Action.OpenUrl', title: l.label, url: l.url })),
    ...(r.link ? [{ type: 'Action.OpenUrl', title: 'Open', url: r.link }] : []),
  ];
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            {
              type: 'TextBlock',
              text: `${toneIcon[r.tone]} ${template?.title ? m.title(escapeMarkdown) : r.title}`,
              weight: 'Bolder',
              size: 'Medium',
              color: colors[r.tone],
              wrap: true,
            },
            { type: 'TextBlock', text: template?.body ? m.text(escapeMarkdown) : r.text, wrap: true },
            ...(r.fields.length > 0 ? [{ type: 'FactSet', facts: r.fields.map((f) => ({ title: f.label, value: f.value })) }] : []),
            { type: 'TextBlock', text: r.footer, isSubtle: true, size: 'Small', wrap: true },
          ],
          ...(actions.length > 0 ? { actions } : {}),
        },
      },
    ],
  };
}

export const teams: ChannelSpec<typeof TeamsConfig> = {
  type: 'teams',
  config: TeamsConfig,
  secrets: ['url'],
  create: ({ http }) =>
    channel({
      build: ({ notification, config, template }) => [jsonPost(config.url, teamsMessage(notification, template))],
      transmit: (out) => postAll(http, out),
    }),
};
