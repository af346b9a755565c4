// A stdio MCP server in Node.js with no package of its own: enough of the protocol for a
// host to list its tools and call them, as servers run with npx are. Its tools get a page
// the two ways Node.js programs do: fetch_url with fetch, get_url with http(s).get; each
// answers "<status>:<the body's first 200 characters>" or "failed:<why>".
'use strict';

const http = require('node:http');
const https = require('node:https');
const readline = require('node:readline');

const urlArgument = {
  type: 'object',
  properties: { url: { type: 'string' } },
  required: ['url'],
};
const tools = [
  { name: 'fetch_url', description: 'Get a page with fetch.', inputSchema: urlArgument },
  { name: 'get_url', description: 'Get a page with http(s).get.', inputSchema: urlArgument },
];

async function withFetch(url) {
  try {
    const answer = await fetch(url);
    return `${answer.status}:${(await answer.text()).slice(0, 200)}`;
  } catch (error) {
    return `failed:${(error.cause && error.cause.message) || error.message}`;
  }
}

function withGet(url) {
  const client = url.startsWith('https:') ? https : http;
  return new Promise((resolve) => {
    client
      .get(url, (answer) => {
        let body = '';
        answer.setEncoding('utf8');
        answer.on('data', (chunk) => (body += chunk));
        answer.on('end', () => resolve(`${answer.statusCode}:${body.slice(0, 200)}`));
      })
      .on('error', (error) => resolve(`failed:${error.message}`));
  });
}

function send(message) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
}

async function answer(request) {
  switch (request.method) {
    case 'initialize':
      return {
        protocolVersion: request.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'node-pages', version: '1.0.0' },
      };
    case 'tools/list':
      return { tools };
    case 'tools/call': {
      const { name, arguments: args } = request.params;
      const text = name === 'fetch_url' ? await withFetch(args.url) : await withGet(args.url);
      return { content: [{ type: 'text', text }] };
    }
    case 'ping':
      return {};
    default:
      return undefined;
  }
}

readline.createInterface({ input: process.stdin }).on('line', async (line) => {
  if (!line.trim()) return;
  const request = JSON.parse(line);
  if (request.id === undefined) return; // a notification
  const result = await answer(request);
  if (result === undefined) {
    send({ id: request.id, error: { code: -32601, message: `no method ${request.method}` } });
  } else {
    send({ id: request.id, result });
  }
});
