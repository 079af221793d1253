/** The parts of an OpenAPI 3.1 document this module reads and completes. */
interface Operation {
  operationId?: string;
  tags?: string[];
  description?: string;
  requestBody?: { description?: string };
  responses?: Record<string, { description?: string }>;
  [key: string]: unknown;
}

export interface OpenApiDocument {
  paths?: Record<string, Record<string, Operation | unknown>>;
  components?: { schemas?: Record<string, unknown>; [key: string]: unknown };
  [key: string]: unknown;
}

export interface DocumentRules {
  /** operationId by `METHOD /path` (OpenAPI path syntax). */
  operationIds: Readonly<Record<string, string>>;
  /** The tags an operation may carry. */
  tags: readonly { name: string }[];
}

const httpMethods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** What the API does with a NUL character, as clients generated from the document show it. */
export const nulRule =
  'No string in the query or the body may contain a NUL character (U+0000): Postgres text cannot hold it, ' +
  'so such a request is refused with 422 and `errors` names the field.';

function* operationsOf(doc: OpenApiDocument): Generator<[key: string, path: string, method: string, op: Operation]> {
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      if (httpMethods.has(method)) yield [`${method.toUpperCase()} ${path}`, path, method, op as Operation];
    }
  }
}

/** Every `$ref` target below `value`. */
function refsIn(value: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(value)) for (const v of value) refsIn(v, into);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') into.add(v);
      else refsIn(v, into);
    }
  }
  return into;
}

/** Drops the component schemas nothing in the document refers to (a generator would emit them as dead types). */
function pruneSchemas(doc: OpenApiDocument): void {
  const schemas = doc.components?.schemas;
  if (!schemas) return;
  const prefix = '#/components/schemas/';
  const { components, ...rest } = doc;
  const pending = [...refsIn([rest, { ...components, schemas: undefined }], new Set())];
  const kept = new Set<string>();
  while (pending.length > 0) {
    const ref = pending.pop()!;
    if (!ref.startsWith(prefix)) continue;
    const name = decodeURIComponent(ref.slice(prefix.length)).replace(/~1/g, '/').replace(/~0/g, '~');
    if (kept.has(name) || !(name in schemas)) continue;
    kept.add(name);
    pending.push(...refsIn(schemas[name], new Set()));
  }
  for (const name of Object.keys(schemas)) if (!kept.has(name)) delete schemas[name];
}

/** Operations that take input say what a NUL character gets them; so does their 422. */
function documentNul(op: Operation): void {
  const invalid = op.responses?.['422'];
  if (!invalid) return;
  op.description = op.description ? `${op.description}\n\n${nulRule}` : nulRule;
  if (!invalid.description || invalid.description === 'Default Response') {
    invalid.description = 'The input is invalid: `errors` names each field (a value out of range, a NUL character in a string...).';
  } else {
    invalid.description = `${invalid.description} Also: a string holding a NUL character.`;
  }
  if (op.requestBody)
    op.requestBody.description = [op.requestBody.description, 'No string in it may contain a NUL character (U+0000).']
      .filter(Boolean)
      .join(' ');
}

/**
 * Completes the generated document for client generators: every operation gets its stable
 * `operationId` and exactly one declared tag, unused component schemas go, and the NUL rule is
 * written where a generated client shows it. A route without an id, an id used twice, an entry
 * naming no route or an undeclared tag is a programming error: thrown, so the server does not start.
 */
export function finishDocument<T extends OpenApiDocument>(doc: T, rules: DocumentRules): T {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  const declaredTags = new Set(rules.tags.map((t) => t.name));
  const documented = new Set<string>();
  for (const [key, path, method, shared] of operationsOf(doc)) {
    documented.add(key);
    // One route with two methods shares one operation object: each method gets its own copy.
    const op: Operation = { ...shared, responses: structuredClone(shared.responses), requestBody: structuredClone(shared.requestBody) };
    if (!op.requestBody) delete op.requestBody;
    doc.paths![path]![method] = op;
    const id = rules.operationIds[key];
    if (!id) problems.push(`${key} has no operationId: add one to control-plane/src/platform/http/operations.ts`);
    else if (seen.has(id)) problems.push(`${key} and ${seen.get(id)} share the operationId ${id}`);
    else {
      seen.set(id, key);
      op.operationId = id;
    }
    if (op.tags?.length !== 1 || !declaredTags.has(op.tags[0]!))
      problems.push(`${key} must carry exactly one declared tag, has ${JSON.stringify(op.tags ?? [])}`);
    documentNul(op);
  }
  for (const key of Object.keys(rules.operationIds))
    if (!documented.has(key)) problems.push(`${key} has an operationId but no documented route`);
  if (problems.length > 0) throw new Error(`The OpenAPI document is incomplete:\n- ${problems.join('\n- ')}`);
  pruneSchemas(doc);
  return doc;
}
