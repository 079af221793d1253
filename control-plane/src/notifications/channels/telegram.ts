import { z } from 'zod';
import type { Notification } from '../../../../shared/src/contracts/notify.ts';
import { compose, escapeAngles, type MessageTemplate } from '../templates.ts';
import { actionLinks, baseUrl, channel, jsonPost, postAll, toneIcon, type ChannelSpec } from './types.ts';

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

const esc = (s: string) => escapeAngles(s, 'text');

/** HTML text (Telegram's safest parse mode): bold title, message, facts, project in italics. */
export function telegramText(n: Notification, template?: MessageTemplate | null): string {
  const m = compose(n, template);
  const r = m.r;
  const title = `${esc(toneIcon[r.tone])} ${m.title(escapeAngles)}`;
  const body = m.text(escapeAngles);
  const facts = r.fields.map((f) => `<b>${esc(f.label)}:</b> ${esc(f.value)}`);
  const text = [`<b>${title}</b>`, body, ...(facts.length > 0 ? ['', ...facts] : []), '', `<i>${esc(r.footer)}</i>`].join('\n');
  if (text.length <= 4096) return text;
  // Telegram refuses more than 4096 characters; cutting at a tag or an entity would break the markup.
  const plain = (v: string, n: number) =>
    esc(v)
      .slice(0, n)
      .replace(/&[a-z]*$/, '');
  return `<b>${plain(m.title(), 200)}</b>\n${plain(m.text(), 3800)}…`;
}

/** The action links as one row of URL buttons under the message. */
export function telegramMessage(n: Notification, chatId: string, template?: MessageTemplate | null) {
  const links = actionLinks(n);
  return {
    chat_id: chatId,
    text: telegramText(n, template),
    parse_mode: 'HTML',
    disable_web_page_preview: true,
    ...(links.length > 0 ? { reply_markup: { inline_keyboard: [links.map((l) => ({ text: l.label, url: l.url }))] } } : {}),
  };
}

export const telegram: ChannelSpec<typeof TelegramConfig> = {
  type: 'telegram',
  config: TelegramConfig,
  secrets: ['bot_token'],
  create: ({ http }) =>
    channel({
      build: ({ notification, config, template }) => [
        jsonPost(`${config.api_base_url}/bot${config.bot_token}/sendMessage`, telegramMessage(notification, config.chat_id, template)),
      ],
      transmit: (out) => postAll(http, out),
    }),
};
