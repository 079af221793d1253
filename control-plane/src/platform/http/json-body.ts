import sjson from 'secure-json-parse';
import { jsonTextTooDeep } from '../../../../shared/src/json-depth.ts';
import { AppError } from '../errors.ts';
import type { App } from './context.ts';

/**
 * JSON bodies, parsed with prototype-poisoning protection. An empty body counts as no body, so a
 * DELETE sent with `Content-Type: application/json` and nothing else is not an error; a body
 * that is not JSON is a 400 with a clear message. So is one nested deeper than any document of
 * ours, measured on the text before parsing: every later walk over the body (the NUL guard,
 * validation, serialisation for the database) then stays shallow.
 */
export function installJsonParser(app: App): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    if (jsonTextTooDeep(text)) return done(new AppError('BODY_TOO_DEEP'), undefined);
    try {
      done(null, sjson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' }));
    } catch {
      done(new AppError('MALFORMED_BODY'), undefined);
    }
  });
}
