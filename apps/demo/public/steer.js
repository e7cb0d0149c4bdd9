// The steering panel: a Session's transcript (committed history, streamed), a form that starts a
// run with a durable message, and the Live Inbox of the running agent — queue, edit in place,
// reorder (Up/Down buttons or drag and drop), withdraw. When the run has ended the server answers
// 410 and the page offers to send the text as a durable message instead; a reorder computed from
// a stale view (409) reloads the queue and says so.
import { announce, contentText, describeError, h, isStatus, keepFocus, showError, srOnly, textContent } from './ui.js';

const $ = (id) => document.getElementById(id);

/** Poll interval of the editable window while a run may be active, and while idle (ms). */
const FAST_POLL_MS = 300;
const SLOW_POLL_MS = 1500;

export function createSteering({ defaults }) {
  let auth = null;
  let onRole = () => {};
  let generation = 0;
  let sessionId = null;
  let transcriptAbort = null;
  let pollTimer;
  let runState = 'idle';
  let snapshot = { active: false, version: 0, messages: [] };
  let snapshotKey = '';
  /** Queue nodes by message id. */
  const nodes = new Map();
  /** The message being edited: `{ id, draft }` or null. */
  let editing = null;
  /** Text the 410 offer would send durably. */
  let offerText = null;
  let dragId = null;

  const live = (gen) => () => gen === generation;

  async function start(nextAuth, options = {}) {
    stop();
    auth = nextAuth;
    onRole = options.onRole ?? onRole;
    const gen = ++generation;
    const isLive = live(gen);
    $('steer-view').dataset.loaded = 'false';
    showError($('steer-error'), null);
    resetTranscript();
    resetQueue();
    hideOffer();
    showError($('live-error'), null);
    showError($('run-error'), null);
    setRunState('idle', { quiet: true });

    sessionId = options.sessionId ?? sessionId ?? defaults().sessionId;
    await loadSessions(isLive);
    if (!isLive()) return;
    try {
      const session = await auth.client.sessions.get(sessionId);
      if (!isLive()) return;
      let role = null;
      if (session.projectId) role = (await auth.client.projects.get(session.projectId).catch(() => ({ role: null }))).role;
      if (!isLive()) return;
      onRole(role);
      $('steer-view').dataset.role = role ?? 'none';
      $('steer-rules').textContent = !session.projectId
        ? 'This session belongs to no project: every account of its workspace may start runs and steer them.'
        : role === 'owner'
          ? 'You own this session\'s project: you may start runs and steer them.'
          : 'You may watch this session, but only the project owner may start runs or steer them: the server answers 403 to anyone else, whatever this page shows.';
    } catch (error) {
      if (!isLive()) return;
      onRole(null);
      $('steer-view').dataset.role = 'none';
      $('steer-rules').textContent = '';
      showError($('steer-error'), `This session is not visible to you. The server answered ${describeError(error)}`);
      $('steer-view').dataset.loaded = 'true';
      return;
    }
    openTranscript(isLive);
    await poll(isLive);
    $('steer-view').dataset.loaded = 'true';
  }

  function stop() {
    generation++;
    transcriptAbort?.abort();
    transcriptAbort = null;
    clearTimeout(pollTimer);
  }

  async function loadSessions(isLive) {
    const select = $('session-select');
    let sessions = [];
    try {
      // The newest 200 Sessions (one page at the API's largest page size).
      sessions = (await auth.client.sessions.list({ limit: 200 })).items;
    } catch {
      // shown through the session load below
    }
    if (!isLive()) return;
    if (!sessions.some((s) => s.id === sessionId)) sessions.unshift({ id: sessionId, title: null });
    select.replaceChildren(...sessions.map((s) => h('option', { value: s.id }, `${s.title ?? 'Untitled'} (${s.id})`)));
    select.value = sessionId;
  }

  // — transcript —

  function resetTranscript() {
    $('transcript').replaceChildren();
    $('transcript-empty').hidden = false;
  }

  function openTranscript(isLive) {
    const controller = new AbortController();
    transcriptAbort = controller;
    const seen = new Set();
    (async () => {
      try {
        // History first, quietly (nothing to announce), then the live stream after its last seq.
        let after;
        let cursor;
        for (;;) {
          const page = await auth.client.sessions.events.list(sessionId, { page: cursor, limit: 500, signal: controller.signal });
          if (!isLive()) return;
          for (const event of page.data) {
            seen.add(event.id);
            appendEvent(event, { quiet: true });
            after = event.seq;
          }
          if (!page.hasMore || page.nextPage === null) break;
          cursor = page.nextPage;
        }
        for await (const event of auth.client.sessions.events.stream(sessionId, { after, signal: controller.signal })) {
          if (!isLive()) return;
          if (seen.has(event.id)) continue;
          seen.add(event.id);
          appendEvent(event, { quiet: false });
        }
      } catch (error) {
        if (!isLive() || controller.signal.aborted) return;
        showError($('steer-error'), `The transcript stream stopped: ${describeError(error)}`);
      }
    })();
  }

  function appendEvent(event, { quiet }) {
    const list = $('transcript');
    const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
    let node;
    const text = contentText(event.content);
    if (event.type === 'user.message') {
      const steered = typeof event.messageId === 'string' && event.messageId.includes('-inbox-');
      node = h('li', { class: `msg ${steered ? 'steered' : 'user'}`, dataset: { kind: steered ? 'steered' : 'user', eventId: event.id } },
        h('span', { class: 'who' }, steered ? 'User · steered via live inbox' : 'User'),
        h('p', { class: 'text' }, text));
    } else if (event.type === 'agent.message') {
      node = h('li', { class: 'msg agent', dataset: { kind: 'agent', eventId: event.id } }, h('span', { class: 'who' }, 'Agent'), h('p', { class: 'text' }, text));
    } else if (event.type === 'session.status_running') {
      node = h('li', { class: 'marker', dataset: { kind: 'status', eventId: event.id } }, 'Run started');
      setRunState('running', { quiet });
      schedulePoll(0);
    } else if (event.type === 'session.status_idle') {
      const outcome = event.outcome ?? undefined;
      // A failed Run says why (error: { type, message }), e.g. the model provider was overloaded.
      const why = event.error && typeof event.error === 'object' ? event.error.message : undefined;
      const label = outcome ? `Run ended (${outcome}${typeof why === 'string' ? `: ${why}` : ''})` : 'Run ended';
      node = h('li', { class: 'marker', dataset: { kind: 'status', eventId: event.id } }, label);
      setRunState('idle', { quiet });
      schedulePoll(0);
    } else if (event.type === 'user.interrupt') {
      node = h('li', { class: 'marker', dataset: { kind: 'status', eventId: event.id } }, 'Interrupted');
    } else {
      node = h('li', { class: 'marker', dataset: { kind: 'other', eventId: event.id } }, event.type);
    }
    list.append(node);
    $('transcript-empty').hidden = true;
    if (atBottom) list.scrollTop = list.scrollHeight;
  }

  function setRunState(next, { quiet = false } = {}) {
    const was = runState;
    runState = next;
    const pill = $('run-state');
    pill.dataset.state = next;
    pill.textContent = next === 'running' ? 'Run: running' : 'Run: idle';
    $('run-submit').textContent = next === 'running' ? 'Send durable message' : 'Start run';
    if (!quiet && was === 'running' && next === 'idle') announce('The run has ended. The live inbox is closed.');
    if (!quiet && was === 'idle' && next === 'running') announce('A run started.');
    renderLiveState();
  }

  // — live inbox —

  function schedulePoll(ms) {
    clearTimeout(pollTimer);
    const gen = generation;
    pollTimer = setTimeout(() => void poll(live(gen)), ms);
  }

  async function poll(isLive) {
    if (!auth || !sessionId) return;
    try {
      const next = await auth.client.sessions.liveInbox.get(sessionId);
      if (!isLive()) return;
      applySnapshot(next);
      schedulePoll(next.active || runState === 'running' ? FAST_POLL_MS : SLOW_POLL_MS);
    } catch (error) {
      if (!isLive()) return;
      showError($('steer-error'), `Could not read the live inbox: ${describeError(error)}`);
      schedulePoll(SLOW_POLL_MS * 2);
    }
  }

  function resetQueue() {
    snapshot = { active: false, version: 0, messages: [] };
    snapshotKey = '';
    editing = null;
    nodes.clear();
    $('queue').replaceChildren();
    $('queue-empty').hidden = false;
    note(null);
    renderLiveState();
  }

  function applySnapshot(next) {
    const key = `${next.active}|${next.version}|${next.messages.map((m) => m.id).join(',')}`;
    if (key === snapshotKey) return;
    snapshotKey = key;
    snapshot = next;
    if (editing && !next.messages.some((m) => m.id === editing.id)) {
      note(`Message #${editing.id} reached the agent (or was withdrawn) before your edit was saved.`);
      editing = null;
    }
    renderQueue();
    renderLiveState();
  }

  function renderLiveState() {
    const pill = $('live-version');
    pill.dataset.state = snapshot.active ? 'open' : 'closed';
    pill.textContent = snapshot.active ? `open · version ${snapshot.version}` : 'closed';
    $('live-state').textContent = snapshot.active
      ? 'The agent is running: queued messages are delivered at its next safe boundary, and stay editable until then.'
      : runState === 'running'
        ? 'A run is starting or finishing; the live inbox is not accepting input right now.'
        : $('transcript').children.length > 0
          ? 'The run has ended, so the live inbox is closed. Anything you send now goes as a durable message and starts a new run.'
          : 'No run is active, so the live inbox accepts nothing. Start a run first.';
    document.getElementById('steer-view').dataset.live = snapshot.active ? 'open' : 'closed';
  }

  function renderQueue() {
    const list = $('queue');
    const messages = snapshot.messages;
    // Re-rendering replaces and moves nodes, which drops focus: remember which message's control
    // had it (e.g. the "Up" button just pressed) and put it back on the same control afterwards.
    const active = document.activeElement;
    const focusedLi = active instanceof HTMLElement ? active.closest('#queue > li') : null;
    const focused = focusedLi ? { id: Number(focusedLi.dataset.messageId), act: active.dataset.act } : null;
    keepFocus(() => {
      const ordered = messages.map((message, index) => {
        let node = nodes.get(message.id);
        if (!node) {
          node = buildQueued(message.id);
          nodes.set(message.id, node);
        }
        fillQueued(node, message, index, messages.length);
        return node;
      });
      const keep = new Set(messages.map((m) => m.id));
      for (const id of [...nodes.keys()]) if (!keep.has(id)) nodes.delete(id);
      list.replaceChildren(...ordered);
    });
    if (focused && document.activeElement !== active) {
      const node = nodes.get(focused.id);
      const target = node?.querySelector(focused.act ? `[data-act="${focused.act}"]:not([disabled])` : 'textarea') ?? node?.querySelector('button:not([disabled])');
      if (target) target.focus();
      else if (!node) $('queue-message').focus();
    }
    $('queue-empty').hidden = messages.length > 0;
  }

  function buildQueued(id) {
    const node = h('li', { class: 'queued', draggable: 'true', dataset: { messageId: String(id) } });
    node.addEventListener('dragstart', (event) => {
      dragId = id;
      node.classList.add('dragging');
      event.dataTransfer.effectAllowed = 'move';
      event.dataTransfer.setData('text/plain', String(id));
    });
    node.addEventListener('dragend', () => {
      dragId = null;
      node.classList.remove('dragging');
      for (const n of nodes.values()) n.classList.remove('drop-before', 'drop-after');
    });
    node.addEventListener('dragover', (event) => {
      if (dragId === null || dragId === id) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = 'move';
      const after = event.offsetY > node.clientHeight / 2;
      node.classList.toggle('drop-after', after);
      node.classList.toggle('drop-before', !after);
    });
    node.addEventListener('dragleave', () => node.classList.remove('drop-before', 'drop-after'));
    node.addEventListener('drop', (event) => {
      event.preventDefault();
      const moved = dragId ?? Number(event.dataTransfer.getData('text/plain'));
      const after = node.classList.contains('drop-after');
      node.classList.remove('drop-before', 'drop-after');
      if (!Number.isInteger(moved) || moved === id) return;
      const order = snapshot.messages.map((m) => m.id).filter((m) => m !== moved);
      const at = order.indexOf(id) + (after ? 1 : 0);
      order.splice(at, 0, moved);
      void reorder(order, `Moved message #${moved}.`);
    });
    return node;
  }

  function fillQueued(node, message, index, count) {
    const id = message.id;
    const text = contentText(message.content);
    const isEditing = editing?.id === id;
    const stamp = `${text}|${index}|${count}|${isEditing}`;
    if (node.dataset.stamp === stamp) return;
    node.dataset.stamp = stamp;
    node.dataset.text = text;
    node.draggable = !isEditing;
    const label = `message #${id}`;
    let body;
    if (isEditing) {
      const fieldId = `edit-${id}`;
      const area = h('textarea', { id: fieldId, rows: '2', class: 'edit-text' });
      area.value = editing.draft ?? text;
      area.addEventListener('input', () => (editing.draft = area.value));
      area.addEventListener('keydown', (event) => {
        if (event.key === 'Escape') cancelEdit(id);
        if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) void saveEdit(id, area.value);
      });
      body = h('div', { class: 'qbody editing' },
        h('label', { for: fieldId }, `Edit ${label}`), area,
        h('div', { class: 'actions' },
          h('button', { type: 'button', onclick: () => void saveEdit(id, area.value) }, 'Save', srOnly(` ${label}`)),
          h('button', { type: 'button', class: 'secondary', onclick: () => cancelEdit(id) }, 'Cancel', srOnly(` editing ${label}`))));
      queueMicrotask(() => area.isConnected && document.activeElement !== area && area.focus());
    } else {
      body = h('div', { class: 'qbody' }, h('p', { class: 'qtext' }, text));
    }
    const actions = isEditing ? null : h('div', { class: 'qactions' },
      h('button', { type: 'button', class: 'icon', disabled: index === 0, dataset: { act: 'up' }, onclick: () => void move(id, -1) }, '↑ Up', srOnly(`: ${label}`)),
      h('button', { type: 'button', class: 'icon', disabled: index === count - 1, dataset: { act: 'down' }, onclick: () => void move(id, +1) }, '↓ Down', srOnly(`: ${label}`)),
      h('button', { type: 'button', class: 'secondary', dataset: { act: 'edit' }, onclick: () => startEdit(id) }, 'Edit', srOnly(` ${label}`)),
      h('button', { type: 'button', class: 'danger', dataset: { act: 'withdraw' }, onclick: () => void withdraw(id) }, 'Withdraw', srOnly(` ${label}`)));
    node.replaceChildren(h('span', { class: 'grip', 'aria-hidden': 'true', title: 'Drag to reorder' }, '⠿'), h('span', { class: 'qid' }, `#${id}`), body, actions);
  }

  function startEdit(id) {
    editing = { id, draft: null };
    snapshotKey = '';
    renderQueue();
  }

  function cancelEdit(id) {
    if (editing?.id !== id) return;
    editing = null;
    renderQueue();
    nodes.get(id)?.querySelector('[data-act="edit"]')?.focus();
  }

  async function saveEdit(id, text) {
    if (!text.trim()) {
      note('A message cannot be empty; withdraw it instead.');
      return;
    }
    try {
      await auth.client.sessions.liveInbox.replace(sessionId, id, textContent(text));
      editing = null;
      announce(`Message #${id} updated.`);
      nodes.get(id)?.removeAttribute('data-stamp');
      note(null);
    } catch (error) {
      handleMutationError(error, { text, id });
      editing = null;
    }
    snapshotKey = '';
    await poll(live(generation));
    nodes.get(id)?.querySelector('[data-act="edit"]')?.focus();
  }

  async function move(id, delta) {
    const order = snapshot.messages.map((m) => m.id);
    const from = order.indexOf(id);
    const to = from + delta;
    if (from < 0 || to < 0 || to >= order.length) return;
    order.splice(from, 1);
    order.splice(to, 0, id);
    await reorder(order, `Message #${id} moved ${delta < 0 ? 'up' : 'down'}.`);
  }

  async function reorder(order, done) {
    try {
      await auth.client.sessions.liveInbox.reorder(sessionId, order);
      announce(done);
      note(null);
    } catch (error) {
      handleMutationError(error, {});
    }
    snapshotKey = '';
    await poll(live(generation));
  }

  async function withdraw(id) {
    try {
      await auth.client.sessions.liveInbox.withdraw(sessionId, id);
      announce(`Message #${id} withdrawn.`);
      note(null);
    } catch (error) {
      handleMutationError(error, { id });
    }
    snapshotKey = '';
    await poll(live(generation));
    $('queue').querySelector('button:not([disabled])')?.focus() ?? $('queue-message').focus();
  }

  async function queue(text) {
    try {
      const id = await auth.client.sessions.liveInbox.queue(sessionId, textContent(text));
      $('queue-message').value = '';
      announce(`Queued as message #${id}.`);
      note(null);
      hideOffer();
    } catch (error) {
      handleMutationError(error, { text });
    }
    snapshotKey = '';
    await poll(live(generation));
  }

  /** 410 → the run ended (offer a durable send); 409 → stale order; 404 → already delivered. */
  function handleMutationError(error, { text, id }) {
    if (isStatus(error, 410)) {
      setRunStateFromGone();
      if (text) showOffer(text);
      else note('The run has ended: the live inbox no longer accepts changes.');
      return;
    }
    if (isStatus(error, 409)) {
      note('The queue changed, reloaded. Check the order and try again.');
      return;
    }
    if (isStatus(error, 404) && id !== undefined) {
      note(`Message #${id} already reached the agent (or was withdrawn); reloaded.`);
      return;
    }
    showError($('live-error'), error, 'Not saved: ');
  }

  function setRunStateFromGone() {
    snapshot = { ...snapshot, active: false, messages: [] };
    snapshotKey = '';
    renderQueue();
    renderLiveState();
  }

  function note(text) {
    if (!text) showError($('live-error'), null);
    const box = $('queue-note');
    box.hidden = !text;
    box.textContent = text ?? '';
    if (text) announce(text);
  }

  function showOffer(text) {
    offerText = text;
    $('offer-text').textContent = text;
    $('ended-offer').hidden = false;
    $('offer-send').focus();
  }

  function hideOffer() {
    offerText = null;
    $('ended-offer').hidden = true;
  }

  async function sendDurable(text) {
    await auth.client.sessions.events.send(sessionId, [{ type: 'user.message', content: textContent(text) }]);
  }

  // — controls —
  $('queue-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const text = $('queue-message').value;
    if (!text.trim() || !auth) return;
    void queue(text);
  });
  $('offer-send').addEventListener('click', async () => {
    if (offerText === null) return;
    const text = offerText;
    try {
      await sendDurable(text);
      hideOffer();
      $('queue-message').value = '';
      announce('Sent as a durable message; it starts a new run.');
      $('queue-message').focus();
    } catch (error) {
      showError($('steer-error'), error, 'Not sent: ');
    }
  });
  $('offer-dismiss').addEventListener('click', () => {
    hideOffer();
    $('queue-message').focus();
  });
  $('run-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const area = $('run-message');
    const text = area.value;
    if (!text.trim() || !auth) return;
    const button = $('run-submit');
    button.disabled = true;
    try {
      await sendDurable(text);
      area.value = '';
      showError($('run-error'), null);
      schedulePoll(0);
    } catch (error) {
      showError($('run-error'), error, 'Not sent: ');
    } finally {
      button.disabled = false;
    }
  });
  $('session-select').addEventListener('change', (event) => {
    location.hash = `#steer?session=${encodeURIComponent(event.target.value)}`;
  });
  $('new-session').addEventListener('click', async () => {
    if (!auth) return;
    try {
      const session = await auth.client.sessions.create({ projectId: defaults().projectId, title: `Steering ${new Date().toLocaleTimeString()}` });
      announce(`Created session ${session.id}.`);
      location.hash = `#steer?session=${encodeURIComponent(session.id)}`;
    } catch (error) {
      showError($('steer-error'), error, 'Could not create a session: ');
    }
  });

  return { start, stop };
}
