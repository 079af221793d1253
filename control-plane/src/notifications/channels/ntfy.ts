import { z } from 'zod';
import { render } from '../content.ts';
import { baseUrl, type ChannelSpec } from './types.ts';

const NtfyConfig = z.strictObject({
  server: baseUrl.default('https://ntfy.sh'),
  topic: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'A topic is 1-64 letters, digits, _ or -.'),
  token: z.string().min(1).max(255).optional().describe('Write-only: an access token (tk_...) for protected topics.'),
});

const priorities = { down: 5, up: 3, info: 3 } as const;
const tags = { down: ['rotating_light'], up: ['white_check_mark'], info: ['bell'] } as const;

/** ntfy's JSON publishing (UTF-8 titles would not survive HTTP headers). */
export function ntfyMessage(n: Parameters<typeof render>[0], topic: string) {
  const r = render(n);
  const facts = r.fields.map((f) => `${f.label}: ${f.value}`);
  return {
    topic,
    title: r.title,
    message: [r.text, ...(facts.length > 0 ? ['', ...facts] : [])].join('\n'),
    priority: priorities[r.tone],
    tags: [...tags[r.tone]],
    ...(r.link ? { click: r.link } : {}),
  };
}

export const ntfy: ChannelSpec<typeof NtfyConfig> = {
  type: 'ntfy',
  config: NtfyConfig,
  secrets: ['token'],
  create: ({ http }) => ({
    async send({ notification, config }) {
      await http.post(`${config.server}/`, {
        json: ntfyMessage(notification, config.topic),
        headers: config.token ? { authorization: `Bearer ${config.token}` } : {},
      });
    },
  }),
};
