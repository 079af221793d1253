import { appendFileSync } from 'node:fs';
import postgres from 'postgres';
import { timestamptz, type Sql } from '../../control-plane/src/platform/db/sql.ts';
import { round } from './stats.ts';

export type StatementCost = { statement: string; calls: number; totalMs: number; meanMs: number; share: number };

/**
 * A client like control-plane/src/platform/db/sql.ts createSql, whose every statement is explained by
 * auto_explain (actual times, buffers) and sent back as a notice: a profile of the database side.
 * Needs a superuser (session_preload_libraries) and auto_explain (postgresql-contrib).
 */
export function createExplainingSql(
  url: string,
  max = 10,
  applicationName = 'uptime-bench-explain',
): { sql: Sql; statements(): StatementCost[]; slowestPlan(): string } {
  const seen = new Map<string, { calls: number; totalMs: number; plan: string; worstMs: number }>();
  const sql = postgres(url, {
    max,
    onnotice: (n) => {
      const m = /^duration: ([\d.]+) ms\s+plan:\n([\s\S]*)$/.exec(String(n.message ?? ''));
      if (!m) return;
      const ms = Number(m[1]);
      // BENCH_EXPLAIN_DUMP=<file>: every plan, with its duration, for reading them all afterwards.
      if (process.env.BENCH_EXPLAIN_DUMP) appendFileSync(process.env.BENCH_EXPLAIN_DUMP, `---- ${ms}\n${m[2]}\n`);
      const text = /Query Text: ([\s\S]*?)\n(?=\S)/.exec(m[2]!)?.[1] ?? m[2]!.split('\n')[0]!;
      const key = text.replace(/\s+/g, ' ').trim().slice(0, 110);
      const s = seen.get(key) ?? { calls: 0, totalMs: 0, plan: '', worstMs: 0 };
      s.calls++;
      s.totalMs += ms;
      if (ms > s.worstMs) {
        s.worstMs = ms;
        s.plan = m[2]!;
      }
      seen.set(key, s);
    },
    connection: {
      application_name: applicationName,
      TimeZone: 'UTC',
      DateStyle: 'ISO, YMD',
      session_preload_libraries: 'auto_explain',
      'auto_explain.log_min_duration': '0',
      'auto_explain.log_analyze': 'on',
      'auto_explain.log_buffers': 'on',
      'auto_explain.log_timing': 'on',
      'auto_explain.log_nested_statements': 'on',
      'auto_explain.log_level': 'notice',
    },
    types: {
      timestamptz,
    },
  });
  const statements = () => {
    const total = [...seen.values()].reduce((t, s) => t + s.totalMs, 0);
    return [...seen]
      .map(([statement, s]) => ({
        statement,
        calls: s.calls,
        totalMs: round(s.totalMs, 1),
        meanMs: round(s.totalMs / s.calls, 3),
        share: round((100 * s.totalMs) / Math.max(total, 1e-9), 1),
      }))
      .sort((a, b) => b.totalMs - a.totalMs);
  };
  const slowestPlan = () => {
    const top = [...seen.values()].sort((a, b) => b.totalMs - a.totalMs)[0];
    if (!top) return '';
    const lines = top.plan.split('\n');
    const first = lines.findIndex((l) => /\(cost=|\(actual time=/.test(l));
    return lines.slice(Math.max(0, first), first + 40).join('\n');
  };
  return { sql: sql as unknown as Sql, statements, slowestPlan };
}

export function statementTable(rows: StatementCost[], top = 8): string {
  const head = '| statement | calls | total ms | mean ms | share |\n|---|---|---|---|---|';
  return [
    head,
    ...rows
      .slice(0, top)
      .map((r) => `| \`${r.statement.replace(/\|/g, '\\|')}\` | ${r.calls} | ${r.totalMs} | ${r.meanMs} | ${r.share}% |`),
  ].join('\n');
}
