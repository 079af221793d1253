import { tooDeepMessage } from '../../../shared/src/json-depth.ts';

/** Every error the API answers with on purpose: a stable code, its HTTP status and text. */
export const errorCatalog = {
  UNAUTHORIZED: { status: 401, message: 'Unauthorized' },
  FORBIDDEN: { status: 403, message: 'Unauthorized access' },
  NOT_FOUND: { status: 404, message: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed' },
  CONFLICT: { status: 409, message: 'Conflict' },
  MALFORMED_BODY: { status: 400, message: 'Malformed JSON body' },
  BODY_TOO_DEEP: { status: 400, message: tooDeepMessage('The JSON body') },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'Request body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Unsupported content type' },
  VALIDATION: { status: 422, message: 'The given data was invalid.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests' },
  UNAVAILABLE: { status: 503, message: 'Service temporarily unavailable' },
} as const;

export type ErrorCode = keyof typeof errorCatalog;

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly errors?: Record<string, string[]>,
    readonly headers?: Record<string, string>,
  ) {
    super(message ?? errorCatalog[code].message);
    this.name = 'AppError';
    this.status = errorCatalog[code].status;
  }
}

export const notFound = () => new AppError('NOT_FOUND');
