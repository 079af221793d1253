import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** An MCP client connected to a control plane's /mcp with a bearer token (close it when done). */
export async function connectMcp(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'uptime-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

/** The text a tool answered with (tools answer one text item). */
export const toolText = (result: Awaited<ReturnType<Client['callTool']>>) => (result.content as { type: string; text: string }[])[0]!.text;
