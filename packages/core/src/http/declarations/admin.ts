/**
 * Workspace administration routes (platform.md "Administration"), for an API key of kind `admin`: accounts, API keys, the log of these writes.
 * Declarations only (data): their service calls are bound in `../route-bindings.ts`.
 */
import { createAccountBody, createApiKeyBody, listAccountsQuery, listAdminOperationLogsQuery, listApiKeysQuery, rotateApiKeyBody } from '../../platform/admin.js';
import { apiKeyViewSchema, workspaceAccountSchema } from '../../schemas/records.js';
import type { RouteDeclaration } from '../route-types.js';
import { adminAccountResponse, adminOperationLogPageResponse, idParams, issuedApiKeyResponse, list, noContent, rotatedApiKeyResponse } from './schemas.js';

/** The admin routes, in registration order. */
export const ADMIN_ROUTES: readonly RouteDeclaration[] = [
  // — workspace administration (an API key of kind `admin`) —
  {
    operationId: 'adminCreateAccount', method: 'POST', path: '/admin/accounts', tags: ['admin'], summary: 'Create an account in the workspace',
    body: createAccountBody, status: 201, response: adminAccountResponse,
    links: { adminCreateApiKey: { operationId: 'adminCreateApiKey', parameters: { id: '$response.body#/account/id' } }, adminDisableAccount: { operationId: 'adminDisableAccount', parameters: { id: '$response.body#/account/id' } } },
    errors: ['conflict', 'unsupported_capability'],
  },
  {
    operationId: 'adminListAccounts', method: 'GET', path: '/admin/accounts', tags: ['admin'], summary: 'Accounts of the workspace, disabled ones included, newest first',
    query: listAccountsQuery, status: 200, response: list(workspaceAccountSchema, 'The accounts'),
    errors: ['invalid_cursor', 'unsupported_capability'],
  },
  {
    operationId: 'adminDisableAccount', method: 'POST', path: '/admin/accounts/:id/disable', tags: ['admin'],
    summary: 'Disable an account in the workspace: it is no member any more and its keys are revoked', params: idParams, status: 200, response: adminAccountResponse,
    errors: ['conflict', 'unsupported_capability'],
  },
  {
    operationId: 'adminEnableAccount', method: 'POST', path: '/admin/accounts/:id/enable', tags: ['admin'],
    summary: 'Enable a disabled account in the workspace again: it is a member again; the keys its disabling revoked stay revoked', params: idParams, status: 200,
    response: adminAccountResponse,
    links: { adminCreateApiKey: { operationId: 'adminCreateApiKey', parameters: { id: '$response.body#/account/id' } } },
    errors: ['unsupported_capability'],
  },
  {
    operationId: 'adminCreateApiKey', method: 'POST', path: '/admin/accounts/:id/keys', tags: ['admin'],
    summary: 'Issue an API key for an account (kind standard unless given); the secret is in this answer only', params: idParams, body: createApiKeyBody,
    status: 201, response: issuedApiKeyResponse,
    links: { adminRotateApiKey: { operationId: 'adminRotateApiKey', parameters: { id: '$response.body#/key/id' } }, adminRevokeApiKey: { operationId: 'adminRevokeApiKey', parameters: { id: '$response.body#/key/id' } } },
    errors: ['conflict', 'unsupported_capability'],
  },
  {
    operationId: 'adminListApiKeys', method: 'GET', path: '/admin/keys', tags: ['admin'], summary: 'API keys of the workspace (never a secret), newest first',
    query: listApiKeysQuery, status: 200, response: list(apiKeyViewSchema, 'The keys'),
    errors: ['invalid_cursor', 'unsupported_capability'],
  },
  {
    operationId: 'adminRotateApiKey', method: 'POST', path: '/admin/keys/:id/rotate', tags: ['admin'],
    summary: 'Rotate an API key: a new secret; the old one works for grace_ms more (default 0)', params: idParams, body: rotateApiKeyBody,
    status: 200, response: rotatedApiKeyResponse,
    errors: ['api_key_not_found', 'conflict', 'unsupported_capability'],
  },
  {
    operationId: 'adminRevokeApiKey', method: 'DELETE', path: '/admin/keys/:id', tags: ['admin'],
    summary: 'Revoke an API key: it answers 401 from now on (other processes: within 1 s)', params: idParams, status: 204, response: noContent,
    errors: ['api_key_not_found', 'unsupported_capability'],
  },
  {
    operationId: 'adminListOperationLogs', method: 'GET', path: '/admin/operation-logs', tags: ['admin'],
    summary: 'The administration writes (Operation Log rows without a project), newest first', query: listAdminOperationLogsQuery,
    status: 200, response: adminOperationLogPageResponse,
    errors: ['invalid_cursor', 'unsupported_capability'],
  },
];
