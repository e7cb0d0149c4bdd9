/**
 * The public shapes of the SDK: records as the client returns them (top-level fields camelCase,
 * times in integer ms since the epoch) and the inputs its methods take. The server speaks
 * snake_case; the client maps top-level fields both ways and leaves nested values (`payload`,
 * `content`, `metadata`) untouched. These types are declared here on purpose: the SDK imports
 * nothing from `@inbox-kit/core`. Spec: platform.md, project-inbox.md, live-inbox.md.
 *
 * They live by area in `./types/` (`common.ts`, `platform.ts`, `inbox.ts`, `sessions.ts`); this
 * file re-exports them all.
 */
export type * from './types/common.js';
export type * from './types/platform.js';
export type * from './types/inbox.js';
export type * from './types/sessions.js';
