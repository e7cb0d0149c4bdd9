// The review board: one Project's inbox as a filtered, paged list; Accept / Reject / Archive for
// the owner (with an optional note); live updates from the project's event stream. The server
// decides what each role may read and do — this page only mirrors it (a deriver gets no decision
// buttons here, and the server answers 403/404 if it tries anyway).
import { announce, dateTime, describeError, h, isStatus, keepFocus, showError, srOnly } from './ui.js';

const $ = (id) => document.getElementById(id);

const INBOX_EVENTS = ['project_inbox.item.created', 'project_inbox.item.accepted', 'project_inbox.item.rejected', 'project_inbox.item.archived'];

const RULES = {
  owner: 'You own this project: you see every item and may accept or reject a pending item, and archive any item. Notes go to the audit log only.',
  deriver: 'You are a deriver: you see only the items you filed and cannot decide. The server enforces this — another sender\'s item answers 404 and a decision answers 403, whatever this page shows.',
  observer: 'You are an observer: observers may not read this inbox (the server answers 403).',
  none: 'You are not a member of this project: the server answers 404 project_not_found, exactly as for a project that does not exist.',
};

/** The review board. `start(auth)` loads it for a caller; `stop()` closes its live stream. */
export function createBoard({ defaults }) {
  let auth = null;
  let onRole = () => {};
  let generation = 0;
  let stream = null;
  let projectId = defaults().projectId;
  let role = null;
  /** Cursor of each page shown so far; `cursors[page]` loads that page. */
  let cursors = [undefined];
  let page = 0;
  let nextCursor = null;
  let loadSeq = 0;
  let refreshTimer;
  /** Items currently shown, by id: `{ item, node }`. */
  const shown = new Map();
  /** Ids to highlight after the next render: id → 'new' | 'moved'. */
  const highlight = new Map();

  const streamPill = (state, text) => {
    const pill = $('board-stream');
    pill.dataset.state = state;
    pill.textContent = `Live updates: ${text}`;
  };

  function filters() {
    const status = $('filter-status').value;
    const type = $('filter-type').value.trim();
    const sender = $('filter-sender').value;
    return {
      ...(status ? { status } : {}),
      ...(type ? { type } : {}),
      ...(sender ? { senderAccountId: sender } : {}),
      limit: Number($('filter-limit').value) || 10,
    };
  }

  function describeFilters(f) {
    const parts = [];
    if (f.status) parts.push(`status ${f.status}`);
    if (f.type) parts.push(`type ${f.type}`);
    if (f.senderAccountId) parts.push(`sender ${f.senderAccountId}`);
    return parts.length ? ` matching ${parts.join(', ')}` : '';
  }

  async function start(nextAuth, options = {}) {
    stop();
    auth = nextAuth;
    onRole = options.onRole ?? onRole;
    const gen = ++generation;
    const live = () => gen === generation;
    showError($('board-error'), null);
    $('board-view').dataset.loaded = 'false';
    await loadProjects(live);
    if (!live()) return;
    await loadProject(live);
  }

  function stop() {
    generation++;
    stream?.abort();
    stream = null;
    clearTimeout(refreshTimer);
    streamPill('off', 'off');
  }

  async function loadProjects(live) {
    const select = $('project-select');
    let ids = [];
    try {
      // The newest 200 (one page at the API's largest page size) fill the picker.
      const { items } = await auth.client.projects.list({ limit: 200 });
      ids = items.map((p) => ({ id: p.id, name: p.name }));
    } catch {
      // the current project still loads below and reports its own error
    }
    if (!live()) return;
    const fallback = defaults().projectId;
    if (!ids.some((p) => p.id === projectId)) projectId = ids.some((p) => p.id === fallback) ? fallback : ids[0]?.id ?? fallback;
    if (!ids.some((p) => p.id === projectId)) ids.unshift({ id: projectId, name: 'not visible to you' });
    select.replaceChildren(...ids.map((p) => h('option', { value: p.id }, `${p.name} (${p.id})`)));
    select.value = projectId;
  }

  async function loadProject(live) {
    const { client } = auth;
    cursors = [undefined];
    page = 0;
    clearList();
    try {
      const { role: r } = await client.projects.get(projectId);
      role = r;
    } catch (error) {
      if (!live()) return;
      role = null;
      if (!isStatus(error, 404)) showError($('board-error'), error, 'Could not load the project: ');
    }
    if (!live()) return;
    onRole(role);
    $('board-view').dataset.role = role ?? 'none';
    $('board-rules').textContent = RULES[role ?? 'none'];
    $('file-item').hidden = !(role === 'owner' || role === 'deriver');
    void loadSessions(live);

    // Read the latest event sequence first, then the list, then stream from that sequence: every
    // change after the list was read arrives as an event, so nothing is missed.
    let after = 0;
    try {
      for (;;) {
        const events = await client.projects.events.list(projectId, { after, limit: 500 });
        after = events.nextAfter;
        if (!events.hasMore) break;
      }
    } catch {
      // no access: the list below reports why
    }
    if (!live()) return;
    const readable = await loadPage();
    if (!live()) return;
    $('board-view').dataset.readable = String(readable);
    $('board-view').dataset.loaded = 'true';
    if (readable) openStream(after, live);
  }

  async function loadSessions(live) {
    const select = $('file-session');
    try {
      const { items } = await auth.client.sessions.list({ projectId, limit: 200 });
      if (!live()) return;
      select.replaceChildren(h('option', { value: '' }, 'None'), ...items.map((s) => h('option', { value: s.id }, `${s.title ?? 'Untitled'} (${s.id})`)));
    } catch {
      select.replaceChildren(h('option', { value: '' }, 'None'));
    }
  }

  // Live updates through the browser's own EventSource, which cannot send `Authorization`: a
  // short-lived stream token (POST /stream-tokens) opens the stream as `?access_token=`. The
  // EventSource reconnects by itself (with Last-Event-ID) after a dropped connection or a server
  // restart; when the server refuses it (the token expired, access was withdrawn) it closes, and
  // the board asks for a new token and reopens after the last event it received.
  function openStream(after, live) {
    const controller = new AbortController();
    stream = controller;
    let source = null;
    let lastId = after;
    const received = [];
    window.inboxKitBoardStream = { received, get lastId() { return lastId; }, get readyState() { return source?.readyState ?? 2; } };
    const connect = async () => {
      let token;
      try {
        ({ token } = await auth.client.createStreamToken());
      } catch (error) {
        if (!live() || controller.signal.aborted) return;
        streamPill('error', 'disconnected');
        announce(`Live updates stopped: ${describeError(error)}`);
        return;
      }
      if (!live() || controller.signal.aborted) return;
      const url = new URL(`/projects/${encodeURIComponent(projectId)}/events/stream`, window.location.origin);
      url.searchParams.set('after', String(lastId));
      url.searchParams.set('types', INBOX_EVENTS.join(','));
      url.searchParams.set('access_token', token);
      source = new EventSource(url);
      source.onopen = () => streamPill('on', 'on');
      const take = (message) => {
        lastId = Number(message.lastEventId);
        received.push(lastId);
      };
      for (const type of INBOX_EVENTS) {
        source.addEventListener(type, (message) => {
          take(message);
          if (live()) onEvent(JSON.parse(message.data));
        });
      }
      // The position was past the newest event (a restored server): reload the list, go on from the newest.
      source.addEventListener('resync', (message) => {
        lastId = Number(message.lastEventId);
        if (live()) void loadPage();
      });
      source.onerror = () => {
        if (!live() || controller.signal.aborted) return;
        streamPill('error', 'reconnecting');
        if (source.readyState === EventSource.CLOSED) {
          source = null;
          setTimeout(() => void connect(), 1000);
        }
      };
    };
    controller.signal.addEventListener('abort', () => source?.close(), { once: true });
    streamPill('connecting', 'connecting');
    void connect();
  }

  function onEvent(event) {
    const p = event.payload ?? {};
    const id = p.inbox_item_id;
    if (typeof id !== 'string') return;
    if (event.type === 'project_inbox.item.created') {
      highlight.set(id, 'new');
      announce(`New item “${p.title ?? p.type}” from ${p.sender_account_id}.`);
    } else {
      highlight.set(id, 'moved');
      const known = shown.get(id)?.item;
      const name = known ? known.title ?? known.type : p.type;
      announce(`“${name}” is now ${p.status} (decided by ${p.decided_by_account_id}).`);
    }
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => void loadPage(), 60);
  }

  function clearList() {
    shown.clear();
    $('items').replaceChildren();
    $('items-summary').textContent = '';
    nextCursor = null;
    updatePager();
  }

  /** Loads the current page; returns false when the caller may not read the inbox. */
  async function loadPage() {
    if (!auth) return false;
    const seq = ++loadSeq;
    const f = filters();
    try {
      const result = await auth.client.projects.inbox.list(projectId, { ...f, cursor: cursors[page] });
      if (seq !== loadSeq) return true;
      showError($('board-error'), null);
      nextCursor = result.nextCursor;
      render(result.items, f);
      return true;
    } catch (error) {
      if (seq !== loadSeq) return false;
      clearList();
      if (isStatus(error, 400) && error.code === 'invalid_cursor') {
        cursors = [undefined];
        page = 0;
        return loadPage();
      }
      const why =
        isStatus(error, 403) ? 'Your role may not read this inbox. ' :
        isStatus(error, 404) ? 'This project is not visible to you. ' : 'Could not load the inbox. ';
      showError($('board-error'), `${why}The server answered ${describeError(error)}`);
      $('items-summary').textContent = '';
      return false;
    }
  }

  function render(items, f) {
    const list = $('items');
    // A re-render replaces an item's node when the item changed, which drops focus if it was
    // inside (e.g. a decision just made while a live event's reload overtook the decide's own):
    // put it back on the same item's next control.
    const active = document.activeElement;
    const focusedId = active instanceof HTMLElement ? active.closest('#items > li')?.dataset.itemId : undefined;
    keepFocus(() => {
      const nodes = items.map((item) => {
        const existing = shown.get(item.id);
        if (existing && existing.item.updatedAt === item.updatedAt && existing.item.status === item.status && existing.role === role) return existing.node;
        const node = renderItem(item);
        shown.set(item.id, { item, node, role });
        return node;
      });
      const keep = new Set(items.map((i) => i.id));
      for (const id of [...shown.keys()]) if (!keep.has(id)) shown.delete(id);
      list.replaceChildren(...nodes);
    });
    if (focusedId !== undefined && active instanceof HTMLElement && !active.isConnected) {
      const node = shown.get(focusedId)?.node;
      (node?.querySelector('button:not([disabled]), input') ?? $('items-summary')).focus();
    }
    for (const [id, kind] of highlight) {
      const node = shown.get(id)?.node;
      if (!node) continue;
      node.classList.remove('is-new', 'is-moved');
      void node.offsetWidth;
      node.classList.add(kind === 'new' ? 'is-new' : 'is-moved');
    }
    highlight.clear();
    const count = items.length;
    $('items-summary').textContent = count === 0
      ? `No items${describeFilters(f)} on this page.`
      : `Showing ${count} item${count === 1 ? '' : 's'}${describeFilters(f)}, newest first.`;
    updatePager();
  }

  function updatePager() {
    $('prev-page').disabled = page === 0;
    $('next-page').disabled = nextCursor === null;
    $('page-label').textContent = `Page ${page + 1}`;
  }

  function renderItem(item) {
    const titleId = `item-${item.id}-title`;
    const name = item.title ?? item.type;
    const row = (term, ...value) => [h('dt', {}, term), h('dd', {}, ...value)];
    return h('li', { class: 'item', dataset: { itemId: item.id, status: item.status } },
      h('article', { 'aria-labelledby': titleId },
        h('div', { class: 'item-head' },
          h('h3', { id: titleId }, item.title ?? h('span', { class: 'untitled' }, '(untitled)')),
          h('span', { class: `status status-${item.status}` }, srOnly('Status: '), item.status)),
        h('dl', { class: 'meta' },
          row('Type', h('code', {}, item.type)),
          row('Sender', item.senderAccountId),
          row('Filed', h('time', { datetime: new Date(item.createdAt).toISOString() }, dateTime(item.createdAt))),
          item.decidedAt !== null ? row('Decided', `${item.status} by ${item.decidedByAccountId}, `, h('time', { datetime: new Date(item.decidedAt).toISOString() }, dateTime(item.decidedAt))) : [],
          row('Sources', sourceLinks(item)),
          row('Id', h('code', {}, item.id))),
        h('details', { class: 'payload', open: true },
          h('summary', {}, 'Payload'),
          h('pre', { tabindex: '0', 'aria-label': `Payload of ${name}` }, h('code', {}, JSON.stringify(item.payload, null, 2)))),
        role === 'owner' ? decisionControls(item, name) : null));
  }

  function sourceLinks(item) {
    const parts = [];
    if (item.sourceSessionId) parts.push(h('a', { href: `#steer?session=${encodeURIComponent(item.sourceSessionId)}` }, `session ${item.sourceSessionId}`));
    if (item.sourceFloorId) parts.push(h('span', {}, 'floor ', h('code', {}, item.sourceFloorId)));
    if (item.sourcePageId) parts.push(h('span', {}, 'page ', h('code', {}, item.sourcePageId)));
    if (item.sourceEventId) parts.push(h('span', {}, 'event ', h('code', {}, item.sourceEventId)));
    if (parts.length === 0) return 'none';
    return h('span', { class: 'sources' }, ...parts);
  }

  function decisionControls(item, name) {
    const decisions = item.status === 'pending' ? ['accept', 'reject', 'archive'] : item.status === 'archived' ? [] : ['archive'];
    if (decisions.length === 0) return h('p', { class: 'decided-note' }, 'Archived: no further decisions.');
    const noteId = `note-${item.id}`;
    const error = h('p', { class: 'error', role: 'alert', hidden: true });
    const note = h('input', { id: noteId, type: 'text', maxlength: '500', autocomplete: 'off' });
    const label = { accept: 'Accept', reject: 'Reject', archive: 'Archive' };
    const buttons = decisions.map((decision) =>
      h('button', { type: 'button', class: `decision decision-${decision}`, dataset: { decision }, onclick: () => decide(item, decision, note, buttons, error, name) },
        label[decision], srOnly(` “${name}”`)));
    return h('div', { class: 'decide', role: 'group', 'aria-label': `Decide “${name}”` },
      h('div', { class: 'field' }, h('label', { for: noteId }, 'Note (optional)'), note),
      h('div', { class: 'actions' }, ...buttons),
      error);
  }

  async function decide(item, decision, note, buttons, errorBox, name) {
    for (const b of buttons) b.disabled = true;
    showError(errorBox, null);
    try {
      const noteText = note.value.trim();
      const updated = await auth.client.projects.inbox[decision](projectId, item.id, noteText ? { note: noteText } : {});
      announce(`You marked “${name}” ${updated.status}.`);
      await loadPage();
      // Keep keyboard users in place: the re-rendered item's next control, or the list summary
      // when the item left this view.
      const node = shown.get(item.id)?.node;
      (node?.querySelector('button:not([disabled]), input') ?? $('items-summary')).focus();
    } catch (error) {
      for (const b of buttons) b.disabled = false;
      if (isStatus(error, 409) && error.code === 'project_inbox_invalid_transition') {
        announce(`“${name}” was already decided by someone else; reloaded.`);
        void loadPage();
        return;
      }
      showError(errorBox, error, 'Not saved: ');
    }
  }

  // — controls —
  $('project-select').addEventListener('change', (event) => {
    projectId = event.target.value;
    if (auth) void start(auth);
  });
  $('filters').addEventListener('submit', (event) => {
    event.preventDefault();
    cursors = [undefined];
    page = 0;
    void loadPage();
  });
  $('filters').addEventListener('reset', () => {
    setTimeout(() => {
      cursors = [undefined];
      page = 0;
      void loadPage();
    });
  });
  $('next-page').addEventListener('click', () => {
    if (nextCursor === null) return;
    cursors[page + 1] = nextCursor;
    page += 1;
    void loadPage().then(() => $('items').querySelector('h3')?.scrollIntoView({ block: 'nearest' }));
  });
  $('prev-page').addEventListener('click', () => {
    if (page === 0) return;
    page -= 1;
    void loadPage();
  });
  $('file-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const box = $('file-error');
    showError(box, null);
    let payload;
    const raw = $('file-payload').value.trim();
    try {
      payload = raw === '' ? {} : JSON.parse(raw);
    } catch (error) {
      showError(box, `The payload is not valid JSON: ${error.message}`);
      $('file-payload').focus();
      return;
    }
    const title = $('file-title').value.trim();
    const session = $('file-session').value;
    try {
      const item = await auth.client.projects.inbox.create(projectId, {
        type: $('file-type').value.trim(),
        title: title || null,
        payload,
        ...(session ? { sourceSessionId: session } : {}),
      });
      $('file-title').value = '';
      announce(`Filed “${item.title ?? item.type}”.`);
      void loadPage();
    } catch (error) {
      showError(box, error, 'Not filed: ');
    }
  });

  return { start, stop };
}
