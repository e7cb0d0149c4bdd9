/**
 * Input rules over HTTP (issue 15 items 2–4), as data (`http-suites-kit.ts`).
 */
import { expect } from 'vitest';
import type { HttpConformanceOptions } from './http-conformance-checks.js';
import { expectError, heldModel, startHttpWorld, type HeldModel, type HttpWorld } from './http-world.js';
import { registerSuite, type HttpSuiteBase, type HttpSuiteCheck, type HttpSuiteGroup } from './http-suites-kit.js';

const text = (t: string) => [{ type: 'text', text: t }];


const IR_SESSION = 'sess_001';
const IR_LI = `/v1/awaken/sessions/${IR_SESSION}/live-inbox`;
const b64 = (bytes: number[]) => btoa(String.fromCharCode(...bytes));
const PNG = b64([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const json = { 'content-type': 'application/json' };

/** The poisoned content, and the path (under `content`) each must be refused at. */
const POISON: [string, unknown[], string][] = [
  ['empty text', text(''), '0.text'],
  ['spaces', text('   '), '0.text'],
  ['newline and tab', text('\n\t'), '0.text'],
  ['a blank block after a good one', [...text('ok'), ...text(' ')], '1.text'],
  ['an image of media type text/html', [{ type: 'image', source: { type: 'base64', media_type: 'text/html', data: PNG } }], '0.source.media_type'],
  ['image data that is not base64', [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: '%%%not base64%%%' } }], '0.source.data'],
  ['empty image data', [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: '' } }], '0.source.data'],
  ['image bytes of another type', [{ type: 'image', source: { type: 'base64', media_type: 'image/gif', data: PNG } }], '0.source.data'],
  ['a file: URL', [{ type: 'image', source: { type: 'url', url: 'file:///etc/passwd' } }], '0.source.url'],
  ['a javascript: URL', [{ type: 'image', source: { type: 'url', url: 'javascript:alert(1)' } }], '0.source.url'],
  ['the cloud metadata URL', [{ type: 'image', source: { type: 'url', url: 'http://169.254.169.254/latest/meta-data/' } }], '0.source.url'],
  ['a loopback URL', [{ type: 'image', source: { type: 'url', url: 'http://127.0.0.1:5432/' } }], '0.source.url'],
  ['a relative URL', [{ type: 'image', source: { type: 'url', url: '/a.png' } }], '0.source.url'],
];


/** What the input-rules checks share: a world with a Run held open and one queued message (`queued`). */
interface InputRulesCtx extends HttpSuiteBase {
  h: HttpWorld;
  model: HeldModel;
  queued: number;
  /** Sends the request and checks: 400 validation_error naming `path`, and nothing written or queued anywhere. */
  refused(method: string, url: string, body: unknown, path: string): Promise<void>;
}

async function openInputRules(base: HttpSuiteBase): Promise<InputRulesCtx> {
  const model = heldModel();
  const h = await startHttpWorld(base.kit, { model });
  const started = await h.request('POST', `/v1/sessions/${IR_SESSION}/events`, { as: 'acc_owner', body: { events: [{ type: 'user.message', content: text('start') }] } });
  expect(started.status, started.text).toBe(200);
  await model.waiting();
  const q = await h.request('POST', IR_LI, { as: 'acc_owner', body: { content: text('kept') } });
  expect(q.status, q.text).toBe(200);
  return {
    ...base, h, model, queued: q.body.id,
    async refused(method, url, body, path) {
      const before = await h.worldState(IR_LI);
      const res = await h.request(method, url, { as: 'acc_owner', body });
      const env = expectError(res, 400, 'validation_error');
      expect(env.error.details.map((d) => d.path), `${method} ${url} ${JSON.stringify(body).slice(0, 120)}`).toContain(path);
      expect(await h.worldState(IR_LI)).toEqual(before);
    },
  };
}

/**
 * Input rules over real HTTP: content blocks a Messages-API model would refuse are 400 with the
 * field path on every path that takes content (Live Inbox queue and replace, durable
 * `user.message`), with nothing queued or committed (live-inbox.md "Content blocks"); JSON numbers
 * a double cannot hold are 400 naming the path, and accepted numbers come back as sent
 * (platform.md "JSON numbers"); bodies that are not `application/json` in UTF-8 are 415
 * `unsupported_media_type` in the one envelope (platform.md "Errors").
 */
export const inputRulesGroup: HttpSuiteGroup<InputRulesCtx> = {
  name: 'input rules over HTTP',
  open: openInputRules,
  async close(ctx) {
    ctx?.model.release();
    await ctx?.h.close();
  },
  checks: [
  {
    name: 'content with %s → 400 with the field path on every path, nothing queued or committed', each: POISON,
    async run(c, _what, content, path) {
      const { h, queued, refused } = c;
      await refused('POST', IR_LI, { content }, `body.content.${path}`);
      await refused('PUT', `${IR_LI}/${queued}`, { content }, `body.content.${path}`);
      await refused('POST', `/v1/sessions/${IR_SESSION}/events`, { events: [{ type: 'user.message', content }] }, `body.events.0.content.${path}`);
      // The queued message is unchanged.
      const view = await h.request('GET', IR_LI, { as: 'acc_owner' });
      expect(view.body.messages).toEqual([{ id: queued, content: text('kept') }]);
    },
  },

  {
    name: 'content a model accepts still passes on every path: text, each image type, public https URLs',
    async run(c) {
      const { h } = c;
      const good = [
        ...text(' padded '),
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
      ];
      const q = await h.request('POST', IR_LI, { as: 'acc_owner', body: { content: good } });
      expect(q.status, q.text).toBe(200);
      const replaced = await h.request('PUT', `${IR_LI}/${q.body.id}`, { as: 'acc_owner', body: { content: good.slice(1) } });
      expect(replaced.status, replaced.text).toBe(204);
      expect((await h.request('DELETE', `${IR_LI}/${q.body.id}`, { as: 'acc_owner' })).status).toBe(204);
    },
  },

  {
    name: 'a number a double cannot hold → 400 naming its path, nothing written; in payloads, turn content and the reorder list',
    async run(c) {
      const { h, queued } = c;
      const { project_id, session_id } = await h.newProject();
      const cases: [string, string, string, string][] = [
        ['POST', `/projects/${project_id}/inbox`, '{"type":"t","payload":{"n":9007199254740993}}', 'body.payload.n'],
        ['POST', `/projects/${project_id}/inbox`, '{"type":"t","payload":{"list":[1,2,{"id":-12345678901234567890}]}}', 'body.payload.list.2.id'],
        ['POST', `/projects/${project_id}/inbox`, '{"type":"t","payload":{"pi":3.14159265358979323846}}', 'body.payload.pi'],
        ['POST', `/projects/${project_id}/inbox`, '{"type":"t","payload":{"tiny":1e-400}}', 'body.payload.tiny'],
        ['POST', `/projects/${project_id}/inbox`, '{"type":"t","payload":{"huge":1e400}}', 'body.payload.huge'],
        ['POST', `/projects/${project_id}/inbox`, '{"type":"t","payload":9007199254740993}', 'body.payload'],
        ['POST', `/sessions/${session_id}/floors`, '{"content":{"tokens":18446744073709551615}}', 'body.content.tokens'],
        ['PUT', `${IR_LI}/order`, `{"order":[${queued},9007199254740993]}`, 'body.order.1'],
      ];
      for (const [method, url, raw, path] of cases) {
        const before = await h.worldState(IR_LI);
        const res = await h.request(method, url, { as: 'acc_owner', raw, headers: json });
        const env = expectError(res, 400, 'validation_error');
        expect(env.error.details, raw).toEqual([expect.objectContaining({ path, code: 'inexact_number' })]);
        expect(await h.worldState(IR_LI), raw).toEqual(before);
      }
    },
  },

  {
    name: 'numbers a double holds come back exactly as sent (by value), from the database of this engine',
    async run(c) {
      const { h } = c;
      const { project_id, session_id } = await h.newProject();
      const raw = '{"type":"t","payload":{"max":9007199254740991,"min":-9007199254740991,"p53":9007199254740992,"f":0.1,"g":0.30000000000000004,"big":1e300,"tiny":5e-324,"one":1.0,"neg0":-0,"list":[1.5,-2.25e-5]}}';
      const created = await h.request('POST', `/projects/${project_id}/inbox`, { as: 'acc_owner', raw, headers: json });
      expect(created.status, created.text).toBe(201);
      const got = await h.request('GET', `/projects/${project_id}/inbox/${created.body.item.id}`, { as: 'acc_owner' });
      expect(got.text).toContain('"max":9007199254740991,"min":-9007199254740991,"p53":9007199254740992,"f":0.1,"g":0.30000000000000004,"big":1e+300,"tiny":5e-324,"one":1,"neg0":0,"list":[1.5,-0.0000225]');
      const turn = await h.request('POST', `/sessions/${session_id}/floors`, { as: 'acc_owner', raw: '{"content":{"n":9007199254740991}}', headers: json });
      expect(turn.status, turn.text).toBe(201);
      const pages = await h.request('GET', `/sessions/${session_id}/floors/${turn.body.floor.id}/pages`, { as: 'acc_owner' });
      expect(pages.text).toContain('"n":9007199254740991');
    },
  },

  {
    name: 'POST inbox with %s and a JSON text → %i', each: [
    ['text/plain (the issue)', { 'content-type': 'text/plain' }, 415],
    ['text/plain; charset=utf-8', { 'content-type': 'text/plain; charset=utf-8' }, 415],
    ['application/x-www-form-urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, 415],
    ['application/json; charset=latin1', { 'content-type': 'application/json; charset=latin1' }, 415],
    ['no Content-Type', {}, 415],
    ['application/json', { 'content-type': 'application/json' }, 201],
    ['application/json; charset=utf-8', { 'content-type': 'application/json; charset=utf-8' }, 201],
    ['application/json;charset="UTF-8"', { 'content-type': 'application/json;charset="UTF-8"' }, 201],
    ['Application/JSON', { 'content-type': 'Application/JSON' }, 201],
  ],
    async run(c, _what, headers, status) {
      const { h } = c;
      const before = await h.inboxRows();
      const res = await h.request('POST', '/projects/proj_main/inbox', { as: 'acc_owner', raw: '{"type":"t"}', headers });
      if (status === 201) {
        expect(res.status, res.text).toBe(201);
        return;
      }
      const env = expectError(res, 415, 'unsupported_media_type');
      expect(env.error.type).toBe('invalid_request_error');
      expect(res.headers.get('x-request-id')).toBe(env.error.request_id);
      expect(await h.inboxRows()).toEqual(before);
    },
  },
  ],
};

/** Registers the input rules (see {@link inputRulesGroup}). */
export function inputRulesSuite(kit: HttpConformanceOptions): void {
  registerSuite(kit, inputRulesGroup);
}
