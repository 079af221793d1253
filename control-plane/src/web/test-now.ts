import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { CheckTestReply } from '../../../shared/src/contracts/check-test.ts';
import { MonitorTestQuery } from '../monitors/check-test.ts';
import { listRegions } from '../monitors/regions/service.ts';
import { AppError } from '../platform/errors.ts';
import { zodIssuesToErrors } from '../platform/http/error-handler.ts';
import { validationMessage } from '../platform/http/validation.ts';
import type { TestOutcome } from './check-details.ts';
import { selectField } from './components.ts';
import { formOf, text, type Form, type WebContext } from './context.ts';
import type { FieldErrors } from './form.ts';
import { html, type Html } from './html.ts';

/**
 * "Test now" on the monitor form: a second submit button (`intent=test`) that runs the check
 * once from the region chosen and shows the form again, as typed, with what the agent saw above
 * it. Nothing is saved. Field problems show under their fields, as a save's do; no agent in the
 * region or too many tests is said in the result panel, not on an error page.
 */

export const isTest = (req: FastifyRequest): boolean => text(formOf(req), 'intent') === 'test';

/** The regions the deployment knows, for the region choice of a test. */
export async function regionChoices(ctx: WebContext): Promise<string[]> {
  return (await listRegions(ctx)).map((r) => r.region);
}

export function testControls(regions: readonly string[], chosen: string): Html {
  const options: (readonly [string, string])[] = [['', 'Any region'], ...regions.map((r) => [r, r] as const)];
  // A region typed into an earlier post (not in the list now) stays chosen.
  if (chosen !== '' && !regions.includes(chosen)) options.push([chosen, chosen]);
  return html`<div class="test-now">
    ${selectField({ name: 'test_region', label: 'Test from', value: chosen, options })}
    <button type="submit" class="btn" name="intent" value="test">Test now</button>
    <p class="help">
      Runs the check once from a probe agent of that region and shows what it saw, every assertion included. Nothing is saved.
    </p>
  </div>`;
}

export interface TestRun<S extends z.ZodType> {
  /** The schema a save of the same form is validated with. */
  schema: S;
  input: (form: Form) => unknown;
  /** What the page finds wrong itself, by its own field names. */
  check: (form: Form) => FieldErrors;
  test: (data: z.output<S>, region: string | undefined) => Promise<CheckTestReply>;
}

/** The form again with the field errors (the API's names), the status to answer with, and the result panel's content. */
export type ShowTest = (form: Form, errors: FieldErrors | undefined, status: number, outcome: TestOutcome) => FastifyReply;

const fixFirst: TestOutcome = { problem: 'Correct the fields marked below to run a test.' };

/** Why a test did not run, in the panel: the service's refusals that are no fault of the form. */
function refusal(err: AppError): TestOutcome | undefined {
  if (err.code === 'UNAVAILABLE') return { problem: `The test could not run. ${err.message}` };
  if (err.code === 'RATE_LIMITED') {
    const wait = err.headers?.['retry-after'];
    return { problem: `Too many tests in a short time: try again${wait ? ` in ${wait} seconds` : ' shortly'}.` };
  }
  if (err.code === 'CONFLICT') return { problem: err.message };
  return undefined;
}

export async function runFormTest<S extends z.ZodType>(
  req: FastifyRequest,
  reply: FastifyReply,
  run: TestRun<S>,
  show: ShowTest,
): Promise<FastifyReply> {
  const form = formOf(req);
  const parsed = run.schema.safeParse(run.input(form), { error: validationMessage });
  const own = run.check(form);
  if (!parsed.success) return show(form, { ...zodIssuesToErrors(parsed.error.issues), ...own }, 422, fixFirst);
  if (Object.keys(own).length > 0) return show(form, own, 422, fixFirst);
  const where = MonitorTestQuery.safeParse({ region: text(form, 'test_region') || undefined });
  if (!where.success) return show(form, undefined, 422, { problem: 'Choose a region from the list.' });
  try {
    return show(form, undefined, 200, { reply: await run.test(parsed.data, where.data.region) });
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (err.code === 'VALIDATION') return show(form, err.errors ?? { form: [err.message] }, 422, fixFirst);
    const outcome = refusal(err);
    if (!outcome) throw err;
    if (err.headers) void reply.headers(err.headers);
    return show(form, undefined, err.status, outcome);
  }
}
