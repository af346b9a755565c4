// Preloaded (NODE_OPTIONS=--require) into each Node.js process of a stdio MCP server whose
// sandbox has the proxied network. Releases before 24 do not read HTTP_PROXY: here fetch,
// and the http and https modules' default agents, open each connection as a tunnel
// (CONNECT host:port) through the proxy the host serves in the sandbox. Names NO_PROXY
// lists (the sandbox's own loopback) are connected to directly. Release 24 and later read
// the variables themselves (NODE_USE_ENV_PROXY), and this does nothing there.
'use strict';

(() => {
  const major = Number(process.versions.node.split('.')[0]);
  const env = process.env;
  const proxyUrl = env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy;
  if (!proxyUrl || major >= 24) return;
  const net = require('node:net');
  const tls = require('node:tls');
  const http = require('node:http');
  const https = require('node:https');

  const proxy = new URL(proxyUrl);
  const proxyPort = Number(proxy.port) || 80;
  const direct = new Set(
    (env.NO_PROXY || env.no_proxy || '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
  const HEAD_LIMIT = 16 * 1024;

  const bare = (host) => String(host).replace(/^\[|\]$/g, '').toLowerCase();
  const once = (callback) => {
    let called = false;
    return (error, socket) => {
      if (called) return;
      called = true;
      callback(error, socket);
    };
  };

  // A socket to host:port through the proxy, once it answered 200; else the proxy's words.
  function tunnel(host, port, callback) {
    const socket = net.connect(proxyPort, proxy.hostname);
    let head = Buffer.alloc(0);
    const fail = (error) => {
      socket.destroy();
      callback(error);
    };
    const onData = (chunk) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > HEAD_LIMIT) fail(new Error('the proxy sent no answer'));
        return;
      }
      socket.removeListener('data', onData);
      socket.removeListener('error', fail);
      const line = head.toString('latin1', 0, end).split('\r\n')[0];
      if (line.split(' ')[1] !== '200') {
        const said = head.toString('utf8', end + 4).trim() || line;
        const error = new Error(`the proxy refused ${host}:${port}: ${said}`);
        error.code = 'ECONNREFUSED';
        fail(error);
        return;
      }
      if (head.length > end + 4) socket.unshift(head.subarray(end + 4));
      callback(null, socket);
    };
    socket.on('error', fail);
    socket.on('data', onData);
    const target = net.isIPv6(host) ? `[${host}]` : host;
    socket.write(`CONNECT ${target}:${port} HTTP/1.1\r\nHost: ${target}:${port}\r\n\r\n`);
  }

  // A connection to host:port, TLS on top where secure, through the proxy unless NO_PROXY
  // names the host; callback(error, socket) once it is ready for the request.
  function connection(secure, host, port, servername, done) {
    const callback = once(done);
    const name = bare(host);
    const wrap = (socket) => {
      if (!secure) return callback(null, socket);
      const secured = tls.connect({
        socket,
        servername: servername || (net.isIP(name) ? undefined : name),
        ALPNProtocols: ['http/1.1'],
      });
      secured.once('secureConnect', () => callback(null, secured));
      secured.once('error', callback);
    };
    if (direct.has(name)) {
      const socket = net.connect(port, name);
      socket.once('connect', () => wrap(socket));
      socket.once('error', callback);
      return;
    }
    tunnel(name, port, (error, socket) => (error ? callback(error) : wrap(socket)));
  }

  // fetch: the bundled client's own agent, made with this connector, as its global one.
  const globalDispatcher = Symbol.for('undici.globalDispatcher.1');
  const builtinFetch = globalThis.fetch;
  if (typeof builtinFetch === 'function') {
    // A data: URL loads the client, and its default agent, without a connection.
    const ready = builtinFetch('data:,').then(
      () => {
        const Agent = globalThis[globalDispatcher].constructor;
        globalThis[globalDispatcher] = new Agent({
          connect(options, callback) {
            const secure = options.protocol === 'https:';
            const port = Number(options.port) || (secure ? 443 : 80);
            connection(secure, options.hostname, port, options.servername, callback);
          },
        });
      },
      () => {},
    );
    globalThis.fetch = async function fetch(...args) {
      await ready;
      return builtinFetch(...args);
    };
  }

  // http.request and https.request without an agent of their own.
  for (const [module, secure] of [
    [http, false],
    [https, true],
  ]) {
    const Base = module.Agent;
    class TunnelAgent extends Base {
      createConnection(options, callback) {
        const port = Number(options.port) || (secure ? 443 : 80);
        connection(secure, options.host || options.hostname, port, options.servername, callback);
        return undefined;
      }
    }
    module.globalAgent = new TunnelAgent({ keepAlive: true });
  }
})();
