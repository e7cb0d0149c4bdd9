/**
 * The demo's host tool: `wait`, on the `assistant` agent, so steering across a tool round can be
 * tried by hand ("wait 3000 then answer", then queue steering while it waits). Its permission is
 * DEMO_TOOL_POLICY: `always_allow` runs it at once, `always_ask` waits for a
 * `user.tool_confirmation`. Spec: live-inbox.md "Tools and boundaries".
 */
import type { Tool, ToolPermission } from '@inbox-kit/core';

/** Longest wait the tool takes (ms). */
export const MAX_WAIT_MS = 10_000;

/**
 * The `wait` tool: input `{ "ms": integer 0–10000 }`, result text `waited <ms> ms`. It stops early
 * (and the Run's interrupt cancels it) when its signal aborts.
 */
export function waitTool(permission: ToolPermission = 'always_allow'): Tool {
  return {
    name: 'wait',
    description: `Waits the given number of milliseconds (0–${MAX_WAIT_MS}), then answers "waited <ms> ms". Call it when the user asks you to wait.`,
    input_schema: {
      type: 'object',
      properties: { ms: { type: 'integer', minimum: 0, maximum: MAX_WAIT_MS, description: 'How long to wait, in milliseconds' } },
      required: ['ms'],
      additionalProperties: false,
    },
    permission,
    execute: (input, { signal }) => new Promise<string>((resolve, reject) => {
      const ms = Number(input.ms);
      if (signal.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve(`waited ${ms} ms`);
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    }),
  };
}
