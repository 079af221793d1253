import { z } from 'zod';
import { render } from '../content.ts';
import { baseUrl, toneIcon, type ChannelSpec } from './types.ts';

const TelegramConfig = z.strictObject({
  bot_token: z
    .string()
    .regex(/^\d{3,20}:[A-Za-z0-9_-]{20,100}$/, 'A bot token looks like 123456789:AA... (from @BotFather).')
    .describe('Write-only.'),
  chat_id: z
    .union([z.string().regex(/^(-?\d{1,20}|@[A-Za-z0-9_]{4,64})$/, 'A chat id is a number or @channelname.'), z.number().int()])
    .transform(String),
  api_base_url: baseUrl.default('https://api.telegram.org').describe('The Bot API address (another one for a local Bot API server).'),
});

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** HTML text (Telegram's safest parse mode): bold title, message, facts, project in italics. */
export function telegramText(n: Parameters<typeof render>[0]): string {
  const r = render(n);
  const facts = r.fields.map((f) => `<b>${esc(f.label)}:</b> ${esc(f.value)}`);
  const text = [
    `<b>${esc(`${toneIcon[r.tone]} ${r.title}`)}</b>`,
    esc(r.text),
    ...(facts.length > 0 ? ['', ...facts] : []),
    '',
    `<i>${esc(r.footer)}</i>`,
  ].join('\n');
  // Telegram refuses more than 4096 characters; cutting at a tag would break the markup.
  return text.length <= 4096 ? text : `<b>${esc(r.title).slice(0, 200)}</b>\n${esc(r.text).slice(0, 3800)}…`;
}

export const telegram: ChannelSpec<typeof TelegramConfig> = {
  type: 'telegram',
  config: TelegramConfig,
  secrets: ['bot_token'],
  create: ({ http }) => ({
    async send({ notification, config }) {
      await http.post(`${config.api_base_url}/bot${config.bot_token}/sendMessage`, {
        json: { chat_id: config.chat_id, text: telegramText(notification), parse_mode: 'HTML', disable_web_page_preview: true },
      });
    },
  }),
};
