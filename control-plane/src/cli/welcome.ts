/** What `uptime start` prints once everything answers: where things are and what to do first. */
export function welcomeScreen(s: {
  url: string;
  pingBaseUrl: string;
  triggerBaseUrl: string;
  /** The local probe agent's ping edge, when this process runs one. */
  agentPingUrl?: string;
  region?: string;
  /** DATA_DIR, when the embedded Postgres or nats-server keep data there. */
  dataDir?: string;
  /** Where the embedded Postgres keeps its data, when not inside DATA_DIR. */
  postgresDir?: string;
}): string {
  const row = (label: string, value: string) => `  ${label.padEnd(13)}${value}`;
  const lines = [
    `uptime is running: API and dashboard at ${s.url}`,
    '',
    row('dashboard', `${s.url}/`),
    row('API docs', `${s.url}/docs   (OpenAPI document at ${s.url}/openapi.json)`),
    row('ping URLs', `${s.pingBaseUrl}/heartbeat/<id>   (/start, /fail, /<exit code>)`),
    ...(s.agentPingUrl ? [row('', `${s.agentPingUrl}/heartbeat/<id>   (the ping edge of region ${s.region ?? 'local'})`)] : []),
    row('notify URLs', `${s.triggerBaseUrl}/api/notify/<id>`),
    ...(s.dataDir ? [row('data', s.postgresDir ? `${s.dataDir}   (Postgres in ${s.postgresDir})` : s.dataDir)] : []),
    '',
    '  First account, from another terminal (or set ALLOW_SIGNUP=true to sign up on the dashboard):',
    "    npm run uptime -- user create --email you@example.com --password 'a long password'",
    '    npm run uptime -- token create --email you@example.com --name laptop   # an API token, printed once',
    '',
    '  Ctrl-C stops everything.',
  ];
  return `\n${lines.join('\n')}\n\n`;
}
