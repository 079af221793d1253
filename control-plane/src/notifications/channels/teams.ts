import { z } from 'zod';
import { render } from '../content.ts';
import { httpUrl, toneIcon, type ChannelSpec } from './types.ts';

const TeamsConfig = z.strictObject({
  url: httpUrl.describe('Write-only: the Teams incoming-webhook or workflow URL (it holds the token).'),
});

const colors = { down: 'attention', up: 'good', info: 'accent' } as const;

/** An Adaptive Card (what both Teams workflows and the older connectors accept). */
export function teamsMessage(n: Parameters<typeof render>[0]) {
  const r = render(n);
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
              text: `${toneIcon[r.tone]} ${r.title}`,
              weight: 'Bolder',
              size: 'Medium',
              color: colors[r.tone],
              wrap: true,
            },
            { type: 'TextBlock', text: r.text, wrap: true },
            ...(r.fields.length > 0 ? [{ type: 'FactSet', facts: r.fields.map((f) => ({ title: f.label, value: f.value })) }] : []),
            { type: 'TextBlock', text: r.footer, isSubtle: true, size: 'Small', wrap: true },
          ],
          ...(r.link ? { actions: [{ type: 'Action.OpenUrl', title: 'Open', url: r.link }] } : {}),
        },
      },
    ],
  };
}

export const teams: ChannelSpec<typeof TeamsConfig> = {
  type: 'teams',
  config: TeamsConfig,
  secrets: ['url'],
  create: ({ http }) => ({
    async send({ notification, config }) {
      await http.post(config.url, { json: teamsMessage(notification) });
    },
  }),
};
