/**
 * The HTTP ceiling: a bare Fastify server (same Fastify, same Node, logging off) with one route,
 * `GET /ping`, returning a small JSON object. Prints `ceiling listening on <url>` when ready.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/ping', async () => ({ status: 'ok', service: 'ceiling' }));
await app.listen({ port: 0, host: '127.0.0.1' });
const { port } = app.server.address();
console.log(`ceiling listening on http://127.0.0.1:${port}`);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => app.close().then(() => process.exit(0)));
