// Small DOM helpers shared by the review board and the steering panel: element builder, the
// aria-live announcer, readable error text, content-block text, and time formatting.

/**
 * Builds an element: `h('button', { type: 'button', class: 'x', onclick }, 'Text', child)`.
 * Attributes starting with `on` become listeners; `dataset` and `hidden`/boolean values are
 * handled; `null`/`undefined`/`false` children are skipped. Text is always set as text (no HTML).
 */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key === 'class') node.className = value;
    else if (value === true) node.setAttribute(key, '');
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A span only screen readers read (extra context for short visible labels like "Up"). */
export function srOnly(text) {
  return h('span', { class: 'visually-hidden' }, text);
}

let announceTimer;
let recent = [];
/**
 * Says `message` through the page's polite live region (also shown as the status bar) and logs it
 * under "Activity". Messages within a moment of each other are joined (the last three), so a
 * burst of live updates is not lost.
 */
export function announce(message) {
  const region = document.getElementById('announcer');
  if (!region) return;
  const log = document.getElementById('activity');
  if (log) {
    log.prepend(h('li', {}, h('time', { datetime: new Date().toISOString() }, clock(Date.now())), ' ', message));
    while (log.children.length > 50) log.lastElementChild.remove();
  }
  clearTimeout(announceTimer);
  recent = [...recent, message].slice(-3);
  region.textContent = recent.join(' ');
  announceTimer = setTimeout(() => (recent = []), 1500);
}

/** `true` for an SDK API error (InboxKitApiError and subclasses) with the given HTTP status. */
export function isStatus(error, status) {
  return typeof error === 'object' && error !== null && error.status === status;
}

/**
 * A one-line, human explanation of an error: "403 project_inbox_decide_denied — Only the project
 * owner may decide (request req_…)". Never a stack or a JSON dump.
 */
export function describeError(error) {
  if (error && typeof error === 'object' && typeof error.status === 'number') {
    const message = String(error.message ?? '').split(' — ')[0];
    return `${error.status} ${error.code}: ${message}${error.requestId ? ` (request ${error.requestId})` : ''}`;
  }
  if (error instanceof Error) return error.name === 'TypeError' ? `Network error: ${error.message}` : error.message;
  return String(error);
}

/** Shows (or hides, with `null`) an error in a `role="alert"` box. */
export function showError(box, error, prefix = '') {
  if (!box) return;
  if (error === null || error === undefined) {
    box.hidden = true;
    box.textContent = '';
    return;
  }
  box.hidden = false;
  box.textContent = `${prefix}${typeof error === 'string' ? error : describeError(error)}`;
}

/** The text of a content-block array (`[{ type: 'text', text }]`); images become "[image]". */
export function contentText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === null || content === undefined ? '' : JSON.stringify(content);
  return content
    .map((block) => (block && block.type === 'text' ? block.text : block && block.type === 'image' ? '[image]' : JSON.stringify(block)))
    .join('\n');
}

/** `[{ type: 'text', text }]` */
export function textContent(text) {
  return [{ type: 'text', text }];
}

/** "14:03:07" */
export function clock(ms) {
  return new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** "2024-05-01 14:03" */
export function dateTime(ms) {
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * Re-focuses `element` after a re-render moved it (moving a node in the DOM drops its focus), when
 * it was focused before and is still in the document.
 */
export function keepFocus(render) {
  const active = document.activeElement;
  render();
  if (active instanceof HTMLElement && active !== document.body && active.isConnected && document.activeElement !== active) active.focus();
}
