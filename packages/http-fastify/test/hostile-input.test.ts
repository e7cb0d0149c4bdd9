/**
 * What of the hostile-input suite is Fastify's own: the route inventory the suite attacks is the
 * server's `/openapi.json`, and here it is checked against Fastify's router (`printRoutes`), so a
 * route missing from the document fails instead of escaping the suite. The suite itself (every
 * hostile request on every route, nothing written, the process up afterwards) moved to the HTTP
 * conformance kit of `@inbox-kit/core/testing` (`hostileInputSuite`), which `conformance.test.ts`
 * runs on the in-memory store and on every engine, with the SQL row counts of every table as its
 * "nothing written" reader.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { engines, startHarness, type Harness } from './harness.js';
import { heldModel, routeInventory } from './hostile-helpers.js';

describe.each(engines)('the hostile-input route inventory (%s)', (engine) => {
  let h: Harness;
  const model = heldModel();
  beforeAll(async () => {
    h = await startHarness(engine, { model });
  });
  afterAll(async () => {
    model.release();
    await h?.close();
  });

  it('every route the router serves is in /openapi.json, and no more', async () => {
    await routeInventory(h);
  });
});
