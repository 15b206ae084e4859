// A stdio MCP server built on the official TypeScript MCP SDK (`@modelcontextprotocol/sdk`, the
// Agent SDK's peer dependency): one tool, `echo`, that answers `echo:<text>`. Started by rein
// for the TypeScript suite's `external_mcp_server` case, configured through the Agent SDK's
// `mcpServers` (which that SDK delivers in `initialize`).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'echo', version: '1.0.0' });
server.registerTool(
  'echo',
  { description: 'Echo the text back', inputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: 'text', text: `echo:${text}` }] }),
);
await server.connect(new StdioServerTransport());
