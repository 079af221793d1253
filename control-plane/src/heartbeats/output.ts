/**
 * What a ping's content says about its run, before the timing rules (state.ts) judge it: the
 * exit code of a `/<code>` ping against the heartbeat's success codes, then its output (the kept
 * part of the request body) against the output rules. A success whose output matches a rule
 * with outcome `fail` is a failure, and a failure whose output matches a rule with outcome
 * `success` is a success: a job that cannot set its exit code can still say how it went, and a
 * wrapper that always calls /fail can be told which failures are expected.
 *
 * Patterns are RE2 (linear time, at most 512 characters); `contains` is a plain, case-sensitive
 * substring. Pure: the same ping and settings always give the same answer, so a ping replayed
 * into the history (history.ts) is judged as it was.
 */
import { patternFinds } from '../../../shared/src/checks/assertions.ts';
import type { PingKind } from './state.ts';

export const outputMatches = ['contains', 'regex'] as const;
export const outputOutcomes = ['success', 'fail'] as const;

export interface OutputRule {
  match: (typeof outputMatches)[number];
  value: string;
  outcome: (typeof outputOutcomes)[number];
}

export interface ContentSettings {
  /** Exit codes that mean success; the others mean failure. */
  success_exit_codes: readonly number[];
  output_rules: readonly OutputRule[];
}

export interface PingContent {
  kind: PingKind;
  exit_code: number | null;
  body: string;
}

export interface ContentVerdict {
  kind: PingKind;
  /** 'output' when an output rule turned the kind. */
  reason: 'output' | null;
}

export const DEFAULT_SUCCESS_EXIT_CODES: readonly number[] = [0];

function matches(rule: OutputRule, body: string): boolean {
  return rule.match === 'contains' ? body.includes(rule.value) : patternFinds(rule.value, body);
}

export function judgeContent(settings: ContentSettings, ping: PingContent): ContentVerdict {
  if (ping.kind === 'start') return { kind: 'start', reason: null };
  let kind: PingKind = ping.kind;
  if (ping.exit_code !== null) kind = settings.success_exit_codes.includes(ping.exit_code) ? 'success' : 'fail';
  if (settings.output_rules.length === 0 || ping.body === '') return { kind, reason: null };
  const turn = kind === 'success' ? 'fail' : 'success';
  for (const rule of settings.output_rules) {
    if (rule.outcome === turn && matches(rule, ping.body)) return { kind: turn, reason: 'output' };
  }
  return { kind, reason: null };
}
