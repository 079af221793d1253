import type { CheckTestReply } from '../../../shared/src/contracts/check-test.ts';
import type { AssertionOutcome, CheckDetails } from '../../../shared/src/contracts/checks.ts';
import type { AssertionTarget } from './check-form-text.ts';
import { targetText } from './check-form-text.ts';
import { formatMs, timeTag } from './components.ts';
import { html, type Html } from './html.ts';
import { dataTable } from './table.ts';

/**
 * What one check saw beyond its status (ADR 0034): every assertion's outcome and the type's
 * details (certificate, DNS answers, ping figures, gRPC status, steps). Shown for a "test now" on
 * the monitor form and for the latest result on the monitor's page.
 */

/** The parts of a check result these views read: a stored one or a test's reply. */
export interface CheckSeen {
  region: string;
  checked_at: string;
  ok: boolean;
  degraded?: boolean | undefined;
  status_code: number | null;
  timings: { total: number };
  error: { class: string; message: string } | null;
  assertions?: readonly AssertionOutcome[] | undefined;
  details?: CheckDetails | null | undefined;
}

function verdict(c: Pick<CheckSeen, 'ok' | 'degraded'>): Html {
  if (!c.ok) return html`<span class="pill down" data-testid="verdict">Failed</span>`;
  if (c.degraded) return html`<span class="pill degraded" data-testid="verdict">Degraded</span>`;
  return html`<span class="pill up" data-testid="verdict">OK</span>`;
}

const shown = (value: unknown): string => (value === null || value === undefined ? '–' : JSON.stringify(value));

export function assertionTable(outcomes: readonly AssertionOutcome[]): Html {
  return dataTable(
    ['Source', 'Path', 'Operator', 'Target', 'Severity', 'Result', 'Observed', 'Message'],
    outcomes.map(
      (a) =>
        html`<tr data-testid="assertion" data-passed="${String(a.passed)}">
          <td>${a.source}</td>
          <td><code>${a.path ?? ''}</code></td>
          <td>${a.operator.replace(/_/g, ' ')}</td>
          <td><code>${targetText(a.target as AssertionTarget)}</code></td>
          <td>${a.severity}</td>
          <td>
            ${a.passed ? html`<span class="pill up">Passed</span>` : html`<span class="pill ${a.severity === 'degraded' ? 'degraded' : 'down'}">Failed</span>`}
          </td>
          <td class="observed"><code>${shown(a.observed)}</code></td>
          <td>${a.message ?? ''}</td>
        </tr>`,
    ),
    { className: 'assertions' },
  );
}

const days = (n: number) => `${Math.floor(n)} day${Math.floor(n) === 1 ? '' : 's'}`;

function certificateFacts(c: NonNullable<CheckDetails['certificate']>): Html {
  return html`<h3>Certificate</h3>
    <dl class="facts" data-testid="check-certificate">
      <dt>Subject</dt>
      <dd>${c.subject}</dd>
      <dt>Issuer</dt>
      <dd>${c.issuer}</dd>
      <dt>Names</dt>
      <dd>${c.sans.join(', ') || '–'}</dd>
      <dt>Valid until</dt>
      <dd>${timeTag(c.valid_to, c.valid_to.slice(0, 10))}</dd>
      <dt>Days left</dt>
      <dd>${c.days_left < 0 ? html`<span class="error-text">expired ${days(-c.days_left)} ago</span>` : days(c.days_left)}</dd>
    </dl>`;
}

function dnsFacts(d: NonNullable<CheckDetails['dns']>): Html {
  return html`<h3>DNS answer <span class="faint">${d.rcode}</span></h3>
    ${
      d.answers.length === 0
        ? html`<p class="muted">No records.</p>`
        : html`<ul class="answers" data-testid="dns-answers">
            ${d.answers.map((a) => html`<li><span class="tag">${a.type}</span> <code>${a.value}</code> <span class="faint">TTL ${a.ttl} s</span></li>`)}
          </ul>`
    }`;
}

function icmpFacts(p: NonNullable<CheckDetails['icmp']>): Html {
  const rtt = (ms: number | null) => (ms === null ? '–' : `${ms.toFixed(1)} ms`);
  return html`<h3>Ping</h3>
    <dl class="facts" data-testid="ping">
      <dt>Sent / received</dt>
      <dd>${p.sent} / ${p.received}</dd>
      <dt>Loss</dt>
      <dd>${p.packet_loss}%</dd>
      <dt>Round trip</dt>
      <dd>min ${rtt(p.rtt_min)}, avg ${rtt(p.rtt_avg)}, max ${rtt(p.rtt_max)}</dd>
    </dl>`;
}

function stepsTable(steps: NonNullable<CheckDetails['steps']>): Html {
  return html`<h3>Steps</h3>
    ${dataTable(
      ['Step', 'Result', 'Status', ['Time', 'num'], 'Error'],
      steps.map(
        (s) =>
          html`<tr data-testid="step">
            <td>${s.name}</td>
            <td>${s.ok ? html`<span class="pill up">OK</span>` : html`<span class="pill down">Failed</span>`}</td>
            <td>${s.status_code ?? '–'}</td>
            <td class="num">${formatMs(s.total_ms)}</td>
            <td>${s.error ?? ''}</td>
          </tr>`,
      ),
    )}`;
}

export function checkDetails(d: CheckDetails | null | undefined): Html {
  if (!d) return html``;
  return html`${d.certificate ? certificateFacts(d.certificate) : ''} ${d.dns ? dnsFacts(d.dns) : ''} ${d.icmp ? icmpFacts(d.icmp) : ''}
  ${
    d.grpc
      ? html`<h3>gRPC</h3>
          <dl class="facts" data-testid="grpc">
            <dt>Health status</dt>
            <dd>${d.grpc.status}</dd>
          </dl>`
      : ''
  }
  ${d.steps ? stepsTable(d.steps) : ''}`;
}

/** What one check saw: verdict, status, time, error, each assertion and the details. */
function checkSeen(c: CheckSeen): Html {
  return html`<dl class="facts">
      <dt>Result</dt>
      <dd>${verdict(c)}</dd>
      <dt>Region</dt>
      <dd><span class="tag">${c.region}</span> ${timeTag(c.checked_at, c.checked_at.slice(11, 19) + ' UTC')}</dd>
      <dt>Status code</dt>
      <dd data-testid="status-code">${c.status_code ?? '–'}</dd>
      <dt>Total time</dt>
      <dd>${formatMs(c.timings.total)}</dd>
      ${
        c.error
          ? html`<dt>Error</dt>
              <dd class="error-text" data-testid="check-error">${c.error.message || c.error.class}</dd>`
          : ''
      }
    </dl>
    ${
      c.assertions && c.assertions.length > 0
        ? html`<h3>Assertions</h3>
            ${assertionTable(c.assertions)}`
        : ''
    }
    ${checkDetails(c.details)}`;
}

/** A "test now" on the monitor form: what the agent saw, or why there is no answer (no agent, too many tests). */
export type TestOutcome = { reply: CheckTestReply } | { problem: string };

export function testResultPanel(outcome: TestOutcome): Html {
  return html`<section class="card test-result" id="test-result" data-testid="test-result" aria-live="polite">
    <div class="card-head"><h2>Test result</h2></div>
    <div class="card-body">
      ${
        'reply' in outcome
          ? html`${checkSeen(outcome.reply)}
              <p class="faint">Checked once, nothing saved: the monitor is created or changed only when you save it.</p>`
          : html`<div class="flash error" role="alert" data-testid="test-problem">${outcome.problem}</div>`
      }
    </div>
  </section>`;
}

/**
 * The latest result's assertions and details on the monitor's page; nothing when it has neither.
 * Its certificate is left to the page's own Certificate card.
 */
export function lastCheckCard(results: readonly CheckSeen[]): Html {
  const latest = results[0];
  if (!latest) return html``;
  const { certificate: _onItsOwnCard, ...details } = latest.details ?? {};
  const last: CheckSeen = { ...latest, details: Object.keys(details).length > 0 ? details : null };
  if (!last.assertions?.length && !last.details) return html``;
  return html`<div class="card" data-testid="last-check">
    <div class="card-head"><h2>Last check</h2></div>
    <div class="card-body">${checkSeen(last)}</div>
  </div>`;
}
