// The demo page's shell: choosing the API key (the seeded accounts from the demo-only
// `GET /demo/accounts`, or a pasted key), the SDK client over the same origin, the role badge,
// and the two views (#board, #steer) switched by the URL hash. The server enforces every rule;
// what this page hides for a role is only cosmetic.
import { createClient } from '/assets/sdk.js';
import { createBoard } from './board.js';
import { createSteering } from './steer.js';
import { announce, describeError } from './ui.js';

const KEY_STORAGE = 'inbox-kit-demo.api-key';

const $ = (id) => document.getElementById(id);

const state = {
  /** Seeded accounts: `{ account_id, name, role_hint, api_key }[]` (empty off loopback). */
  accounts: [],
  projectId: 'proj_main',
  sessionId: 'sess_001',
  /** `{ client, me }` of the chosen key, or null. */
  auth: null,
};

const board = createBoard({ defaults: () => state });
const steering = createSteering({ defaults: () => state });

/** Reads the demo-only account list; off loopback the route is a 404 and the page asks for a key. */
async function loadAccounts() {
  const notice = $('demo-notice');
  try {
    const response = await fetch('/demo/accounts', { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const body = await response.json();
    state.accounts = Array.isArray(body.accounts) ? body.accounts : [];
    state.projectId = body.project_id ?? state.projectId;
    state.sessionId = body.session_id ?? state.sessionId;
    notice.textContent = `${body.notice ?? 'Demo only.'} The page keeps the key you choose in this tab's session storage.`;
    notice.hidden = false;
  } catch {
    state.accounts = [];
    notice.textContent = 'This server does not hand out demo keys (it is not bound to a loopback address). Paste an API key under "Use another API key".';
    notice.hidden = false;
  }
  const select = $('account-select');
  select.replaceChildren();
  for (const account of state.accounts) {
    const option = document.createElement('option');
    option.value = account.api_key;
    option.textContent = `${account.name} (${account.account_id}) — ${account.role_hint}`;
    option.dataset.accountId = account.account_id;
    select.append(option);
  }
  const custom = document.createElement('option');
  custom.value = '';
  custom.textContent = 'Another key (paste it below)';
  select.append(custom);
  select.disabled = false;

  const senders = $('filter-sender');
  for (const account of state.accounts) {
    const option = document.createElement('option');
    option.value = account.account_id;
    option.textContent = `${account.account_id} (${account.role_hint})`;
    senders.append(option);
  }
}

/** Switches to `apiKey`: new client, `GET /me`, then both views reload for the new caller. */
let keySeq = 0;
async function useKey(apiKey, { quiet = false } = {}) {
  const token = ++keySeq;
  board.stop();
  steering.stop();
  const select = $('account-select');
  const known = state.accounts.find((a) => a.api_key === apiKey);
  select.value = known ? apiKey : '';
  if (!apiKey) {
    state.auth = null;
    $('whoami').textContent = 'Not signed in: choose an account or paste a key';
    setRole(null);
    route();
    return;
  }
  sessionStorage.setItem(KEY_STORAGE, apiKey);
  const client = createClient({ baseUrl: location.origin, apiKey, retry: { retries: 1, baseDelayMs: 100 } });
  try {
    const me = await client.me();
    if (token !== keySeq) return;
    state.auth = { client, me };
    $('whoami').textContent = `${me.account.name} (${me.account.id})`;
    if (!quiet) announce(`Signed in as ${me.account.name}.`);
  } catch (error) {
    if (token !== keySeq) return;
    state.auth = null;
    $('whoami').textContent = `This key was refused: ${describeError(error)}`;
    setRole(null);
    route();
    return;
  }
  route();
}

/** Shows the caller's role in the current project (as the server reports it). */
function setRole(role) {
  const badge = $('role-badge');
  badge.dataset.role = role ?? '';
  badge.textContent = role ? `role: ${role}` : 'no role in this project';
  document.body.dataset.role = role ?? 'none';
}

function parseHash() {
  const [view, query = ''] = location.hash.replace(/^#/, '').split('?');
  return { view: view === 'steer' ? 'steer' : 'board', params: new URLSearchParams(query) };
}

/** Shows the view named by the hash and (re)starts it for the current key. */
function route() {
  const { view, params } = parseHash();
  $('board-view').hidden = view !== 'board';
  $('steer-view').hidden = view !== 'steer';
  for (const [tab, name] of [[$('tab-board'), 'board'], [$('tab-steer'), 'steer']]) {
    if (view === name) tab.setAttribute('aria-current', 'page');
    else tab.removeAttribute('aria-current');
  }
  if (!state.auth) return;
  if (view === 'board') {
    steering.stop();
    board.start(state.auth, { onRole: setRole });
  } else {
    board.stop();
    steering.start(state.auth, { sessionId: params.get('session') ?? undefined, onRole: setRole });
  }
}

$('account-select').addEventListener('change', (event) => {
  const value = event.target.value;
  if (value) void useKey(value);
  else document.querySelector('.other-key').open = true;
});

$('custom-key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = $('custom-key');
  const key = input.value.trim();
  input.value = '';
  if (key) void useKey(key);
});

window.addEventListener('hashchange', () => route());

await loadAccounts();
const remembered = sessionStorage.getItem(KEY_STORAGE);
const first = state.accounts[0]?.api_key;
await useKey(remembered || first || '', { quiet: true });
document.body.dataset.ready = 'true';
