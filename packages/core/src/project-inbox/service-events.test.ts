/**
 * ProjectInboxService over the in-memory reference store, with a frozen clock and sequential ids
 * (the world of `test-support.ts`): Project Event visibility and source, and projectEventFeed
 * (authorised as of now). Spec: project-inbox.md.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { PROJECT_FEED_RECHECK_MS } from '../platform/service.js';
import { makeWorld, T0, type World } from './test-support.js';

let w: World;
beforeEach(async () => {
  w = await makeWorld();
});

describe('Project Event visibility and source (platform.md "Project Events")', () => {
  it('every event the services write carries the visibility of its type and the source of its context', async () => {
    const before = w.mem.raw().events.length;
    const owner = w.ctx('acc_owner');
    await w.platform.addMember(owner, 'proj_main', { account_id: 'acc_outsider', role: 'observer' });
    await w.platform.createSession({ ...owner, source: 'system' }, { id: 'sess_sys', project_id: 'proj_main', title: null });
    const item = await w.inbox.create({ ...w.ctx('acc_deriver'), source: 'runtime_job' }, 'proj_main', { type: 'probe' });
    await w.inbox.accept(owner, 'proj_main', item.id);
    await w.platform.removeMember({ ...owner, source: 'runtime_job' }, 'proj_main', 'acc_outsider');
    await w.platform.archiveProject({ ...owner, source: 'system' }, 'proj_side');
    expect(w.mem.raw().events.slice(before).map((e) => [e.type, e.visibility, e.source])).toEqual([
      ['project.member.added', 'project', 'api'],
      ['session.created', 'project', 'system'],
      ['project_inbox.item.created', 'owner', 'runtime_job'],
      ['project_inbox.item.accepted', 'owner', 'api'],
      ['project.member.removed', 'project', 'runtime_job'],
      ['project.archived', 'project', 'system'],
    ]);
  });

  it('events listed carry both fields, and an observer sees only `project` events', async () => {
    await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 'probe' });
    const asOwner = await w.platform.listProjectEvents(w.ctx('acc_owner'), 'proj_main', { limit: 200 });
    const asObserver = await w.platform.listProjectEvents(w.ctx('acc_observer'), 'proj_main', { limit: 200 });
    expect(asOwner.items.some((e) => e.visibility === 'owner')).toBe(true);
    for (const e of asOwner.items) expect(['api', 'runtime_job', 'system']).toContain(e.source);
    expect(asObserver.items.length).toBeGreaterThan(0);
    expect(asObserver.items.every((e) => e.visibility === 'project')).toBe(true);
  });
});

describe('projectEventFeed: authorised as of now', () => {
  it('latest names the newest sequence; a membership event naming the caller forces a check, other changes are seen within the recheck interval', async () => {
    const owner = w.ctx('acc_owner');
    const feed = await w.platform.projectEventFeed(w.ctx('acc_deriver'), 'proj_main');
    const latest = w.mem.raw().events.filter((e) => e.project_id === 'proj_main').length;
    expect(await feed.latest()).toBe(latest);
    const item = await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 'probe' });
    const [created] = await feed.replay(latest, 10);
    expect(created?.data).toMatchObject({ type: 'project_inbox.item.created', visibility: 'owner', payload: { inbox_item_id: item.id } });
    await feed.authorize([created!]);
    expect(feed.visible(created!)).toBe(true);

    // Changed without an event (storage edited directly): seen once the recheck interval has passed.
    await w.store.upsertMembership({ project_id: 'proj_main', account_id: 'acc_deriver', role: 'observer', created_at: T0 });
    await feed.authorize([]);
    expect(feed.visible(created!)).toBe(true);
    w.clock.advance(PROJECT_FEED_RECHECK_MS);
    await feed.authorize([]);
    expect(feed.visible(created!)).toBe(false);

    // A membership event naming the caller is checked before it is delivered, whatever the time.
    await w.platform.addMember(owner, 'proj_main', { account_id: 'acc_deriver', role: 'deriver' });
    const [promoted] = await feed.replay(latest + 1, 10);
    expect(promoted?.type).toBe('project.member.added');
    await feed.authorize([promoted!]);
    expect(feed.visible(created!)).toBe(true);
    // Another member's change does not force one.
    await w.platform.addMember(owner, 'proj_main', { account_id: 'acc_outsider', role: 'observer' });
    await w.store.deleteMembership('proj_main', 'acc_deriver');
    const [other] = await feed.replay(latest + 2, 10);
    expect(other?.data.payload['account_id']).toBe('acc_outsider');
    await feed.authorize([other!]);
    expect(feed.visible(created!)).toBe(true);
    await w.platform.addMember(owner, 'proj_main', { account_id: 'acc_deriver', role: 'deriver' });
    await w.platform.removeMember(owner, 'proj_main', 'acc_deriver');
    const [, removed] = await feed.replay(latest + 3, 10);
    expect(removed?.type).toBe('project.member.removed');
    await expect(feed.authorize([removed!])).rejects.toMatchObject({ code: 'project_not_found' });
    expect(feed.visible({ id: 1, type: 'project.created', data: w.events.main })).toBe(false);
  });

  it('the feeds of one caller share the role read of a check due on the interval (one read for a fan-out), and a member event naming the caller reads again', async () => {
    const owner = w.ctx('acc_owner');
    const feeds = await Promise.all([1, 2, 3].map(() => w.platform.projectEventFeed(w.ctx('acc_deriver'), 'proj_main')));
    const latest = w.mem.raw().events.filter((e) => e.project_id === 'proj_main').length;
    await w.inbox.create(w.ctx('acc_deriver'), 'proj_main', { type: 'probe' });
    const [created] = await feeds[0]!.replay(latest, 10);
    await w.store.upsertMembership({ project_id: 'proj_main', account_id: 'acc_deriver', role: 'observer', created_at: T0 });
    w.clock.advance(PROJECT_FEED_RECHECK_MS);
    const reads = vi.spyOn(w.store, 'getProject');
    const [first, ...others] = feeds;
    const inFlight = others.map((feed) => feed.authorize([created!]));
    expect(inFlight.every((check) => check instanceof Promise)).toBe(true); // joined the read in flight
    await Promise.all(inFlight);
    expect(reads).toHaveBeenCalledTimes(1);
    // Once it answered, a feed whose check falls due takes its answer at once (no promise).
    expect(first!.authorize([created!])).toBeUndefined();
    expect(reads).toHaveBeenCalledTimes(1);
    // Every feed sees what the one read found (the demotion), and none reads again within the interval.
    for (const feed of feeds) expect(feed.visible(created!)).toBe(false);
    w.clock.advance(PROJECT_FEED_RECHECK_MS - 1);
    await Promise.all(feeds.map((feed) => feed.authorize([])));
    expect(reads).toHaveBeenCalledTimes(1);
    // A member event naming the caller is read again by every feed, whenever it comes.
    await w.platform.addMember(owner, 'proj_main', { account_id: 'acc_deriver', role: 'deriver' });
    const [promoted] = await feeds[0]!.replay(latest + 1, 10);
    expect(promoted?.type).toBe('project.member.added');
    await Promise.all(feeds.map((feed) => feed.authorize([promoted!])));
    expect(reads).toHaveBeenCalledTimes(4);
    for (const feed of feeds) expect(feed.visible(created!)).toBe(true);
    // A removal reaches every feed: the shared read's refusal ends them all.
    await w.store.deleteMembership('proj_main', 'acc_deriver');
    w.clock.advance(PROJECT_FEED_RECHECK_MS);
    const refused = await Promise.allSettled(feeds.map((feed) => feed.authorize([])));
    expect(refused.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(reads).toHaveBeenCalledTimes(5);
  });
});
