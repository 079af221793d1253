import { z } from 'zod';
import type { Notification } from '../../../../shared/src/contracts/notify.ts';
import { compose, type MessageTemplate } from '../templates.ts';
import { actionLinks, baseUrl, channel, jsonPost, postAll, type ChannelSpec } from './types.ts';

const NtfyConfig = z.strictObject({
  server: baseUrl.default('https://ntfy.sh'),
  topic: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'A topic is 1-64 letters, digits, _ or -.'),
  token: z.string().min(1).max(255).optional().describe('Write-only: an access token (tk_...) for protected topics.'),
  acknowledge: z
    .enum(['page', 'post'])
    .default('page')
    .describe(
      'What the Acknowledge button does: page opens the acknowledge page (every ntfy app); post acknowledges at once with a POST the phone app makes (the web app makes it from the browser, which may refuse it).',
    ),
});

const priorities = { down: 5, up: 3, info: 3 } as const;
const tags = { down: ['rotating_light'], up: ['white_check_mark'], info: ['bell'] } as const;

/**
 * ntfy's JSON publishing (UTF-8 titles would not survive HTTP headers). The action links are
 * `view` actions (ntfy shows three at most, exactly ours); with `acknowledge: post` the first is an
 * `http` action that acknowledges without opening anything.
 */
export function ntfyMessage(n: Notification, topic: string, template?: MessageTemplate | null, acknowledge: 'page' | 'post' = 'page') {
  const m = compose(n, template);
  const r = m.r;
  const facts = r.fields.map((f) => `${f.label}: ${f.value}`);
  const links = actionLinks(n);
  return {
    topic,
    title: m.title(),
    message: [m.text(), ...(facts.length > 0 ? ['', ...facts] : [])].join('\n'),
    priority: priorities[r.tone],
    tags: [...tags[r.tone]],
    ...(r.link ? { click: r.link } : {}),
    ...(links.length > 0
      ? {
          actions: links.map((l) =>
            l.key === 'acknowledge' && acknowledge === 'post'
              ? { action: 'http', label: l.label, url: l.url, method: 'POST', clear: true }
              : { action: 'view', label: l.label, url: l.url },
          ),
        }
      : {}),
  };
}

export const ntfy: ChannelSpec<typeof NtfyConfig> = {
  type: 'ntfy',
  config: NtfyConfig,
  secrets: ['token'],
  create: ({ http }) =>
    channel({
      build: ({ notification, config, template }) => [
        jsonPost(
          `${config.server}/`,
          ntfyMessage(notification, config.topic, template, config.acknowledge),
          config.token ? { authorization: `Bearer ${config.token}` } : {},
        ),
      ],
      transmit: (out) => postAll(http, out),
    }),
};
