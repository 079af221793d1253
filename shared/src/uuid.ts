const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `s` is a UUID in its text form (any version, either case): what Postgres's uuid type takes. */
export const isUuid = (s: string): boolean => UUID.test(s);
