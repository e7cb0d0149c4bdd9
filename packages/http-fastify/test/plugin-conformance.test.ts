/**
 * The thin wire suite of the HTTP kit (`runHttpWire`, on a SQLite file) against the bare `inboxKit` plugin registered in a host's own, plain
 * Fastify app (not `createServer`), built with `inboxKitServerOptions()`: the host has its own
 * route, and the plugin its body deadline. What a plugin cannot do (path params over 100
 * characters, undecodable percent-encoding, requests Node's parser refuses) the recommended
 * server options do; everything else the plugin does within its own scope.
 */
import { connectionPolicy, guardConnections, requestIdFor } from '@inbox-kit/core/http';
import { runHttpWire } from '@inbox-kit/core/testing';
import { openSqliteTestStore } from '@inbox-kit/storage-kysely/testing';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { inboxKit, inboxKitNotFoundAnswer, inboxKitServerOptions } from '../src/index.js';

runHttpWire('inboxKit plugin in a plain Fastify app with inboxKitServerOptions(), wire suite on sqlite', {
  openStore: openSqliteTestStore,
  async start(services, settings = {}) {
    const app = Fastify({ logger: false, ...inboxKitServerOptions() });
    app.get('/mine', async () => ({ mine: true }));
    // This host answers its own unknown paths in inbox-kit's envelope (the kit checks them; a host
    // keeping its own 404 shape, or mounting the plugin under a prefix, is embedding.test.ts).
    // Before its body is read, closing the connection, when the body has not all arrived.
    const notFound = (request: FastifyRequest, reply: FastifyReply) => {
      const request_id = requestIdFor(request.headers['x-request-id']);
      if (!request.raw.complete) void reply.header('connection', 'close');
      // inbox-kit's answer for its own paths (405 with Allow under another method), 404 elsewhere.
      const answer = inboxKitNotFoundAnswer(request, request_id);
      return reply.code(answer.status).headers(answer.headers ?? {}).header('x-request-id', request_id).header('request-id', request_id).send(answer.body);
    };
    app.addHook('onRequest', async (request, reply) => {
      if (request.is404 && !request.raw.complete) return notFound(request, reply);
    });
    app.setNotFoundHandler(notFound);
    await app.register(inboxKit, {
      services, streamTiming: { heartbeatMs: 60_000, ...settings.streamTiming },
      ...(settings.bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs: settings.bodyTimeoutMs }),
      ...(settings.credentialThrottle === undefined ? {} : { credentialThrottle: settings.credentialThrottle }),
      ...(settings.maxBodiesPerKey === undefined ? {} : { maxBodiesPerKey: settings.maxBodiesPerKey }),
    ...(settings.bodyBytesPerSecondPerKey === undefined ? {} : { bodyBytesPerSecondPerKey: settings.bodyBytesPerSecondPerKey }),
      ...(settings.cors === undefined ? {} : { cors: settings.cors }),
    });
    // A host owns its server: it puts it under the contract's connection policy itself.
    const connections = guardConnections(app.server, connectionPolicy(settings.connections));
    app.addHook('onClose', async () => connections.close());
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    return {
      url: `http://127.0.0.1:${address.port}`,
      close: async () => {
        const closing = app.close();
        app.server.closeAllConnections();
        await closing;
      },
    };
  },
});
