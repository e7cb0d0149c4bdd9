/**
 * Project Inbox routes (project-inbox.md "Endpoints"): file, list, read and decide inbox items.
 * Declarations only (data): their service calls are bound in `../route-bindings.ts`.
 */
import { createInboxItemBody, decideInboxItemBody, listInboxItemsQuery } from '../../project-inbox/schemas.js';
import type { RouteDeclaration } from '../route-types.js';
import { createItemHeaders, idParams, inboxItemPageResponse, itemParams, itemResponse } from './schemas.js';

const CREATE_ITEM_DESCRIPTION = [
  'Writes the item, one Operation Log row and one Project Event in one transaction, then publishes the event.',
  '',
  '**Safe retries.** Send `Idempotency-Key` (1–255 printable ASCII characters; per workspace and acting account) to make a',
  'repeat safe: a request with a key already used for the same project and the same body (compared after',
  'normalisation) answers `201` with the item that first request created, as it is now, and the header',
  '`Idempotent-Replayed: true`; nothing is written or published again. The same key with another body or',
  'project answers `409 idempotency_key_reused`. A request that fails records nothing, so a corrected retry',
  'may reuse its key. Concurrent requests with one key create one item.',
].join('\n');

/** The project-inbox routes, in registration order. */
export const PROJECT_INBOX_ROUTES: readonly RouteDeclaration[] = [
  // — Project Inbox —
  {
    operationId: 'createInboxItem', method: 'POST', path: '/projects/:id/inbox', tags: ['project-inbox'], summary: 'File an inbox item (owner or deriver)',
    description: CREATE_ITEM_DESCRIPTION, params: idParams, headers: createItemHeaders, body: createInboxItemBody, status: 201,
    response: itemResponse('The new item (`status: pending`), or on a replay the item the key created (with `Idempotent-Replayed: true`)'),
    links: { getInboxItem: { operationId: 'getInboxItem', parameters: { id: '$request.path.id', item_id: '$response.body#/item/id' } }, decideInboxItem: { operationId: 'decideInboxItem', parameters: { id: '$request.path.id', item_id: '$response.body#/item/id' } } },
    errors: ['project_not_found', 'project_inbox_write_denied', 'project_archived', 'project_inbox_payload_invalid', 'project_inbox_payload_too_large', 'project_inbox_source_scope_mismatch', 'idempotency_key_reused', 'session_not_found', 'floor_not_found', 'page_not_found', 'conflict'],
  },
  {
    operationId: 'listInboxItems', method: 'GET', path: '/projects/:id/inbox', tags: ['project-inbox'], summary: 'List inbox items, newest first',
    params: idParams, query: listInboxItemsQuery, status: 200, response: inboxItemPageResponse,
    errors: ['project_not_found', 'project_inbox_read_denied', 'invalid_cursor'],
  },
  {
    operationId: 'getInboxItem', method: 'GET', path: '/projects/:id/inbox/:item_id', tags: ['project-inbox'], summary: 'Get one inbox item',
    params: itemParams, status: 200, response: itemResponse('The item'),
    errors: ['project_not_found', 'project_inbox_read_denied', 'project_inbox_item_not_found'],
  },
  {
    operationId: 'decideInboxItem', method: 'PATCH', path: '/projects/:id/inbox/:item_id', tags: ['project-inbox'], summary: 'Decide an inbox item (owner only)',
    params: itemParams, body: decideInboxItemBody, status: 200, response: itemResponse('The decided item'),
    errors: ['project_not_found', 'project_inbox_decide_denied', 'project_inbox_item_not_found', 'project_inbox_invalid_transition', 'project_archived', 'conflict'],
  },
];
