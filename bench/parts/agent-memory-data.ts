/** Monitor i as the assigner writes it into KV `assignments` (uuid, url and name unique per monitor). */
export function assignmentJson(i: number, region: string, targetUrl: string): string {
  const hex = i.toString(16).padStart(12, '0');
  return JSON.stringify({
    monitor_id: `00000000-0000-4000-8000-${hex}`,
    project_id: `00000000-0000-4000-9000-${(i % 1000).toString(16).padStart(12, '0')}`,
    region,
    url: `${targetUrl}monitors/${hex}/health?check=uptime`,
    method: 'GET',
    valid_http_codes: [200, 201, 204, 301, 302],
    basic_auth_username: null,
    basic_auth_password_sealed: null,
    interval: 3_600,
    timeout: 10,
    follow_redirects: true,
    revision: new Date(1_700_000_000_000 + i).toISOString(),
  });
}

export const monitorIdOf = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
