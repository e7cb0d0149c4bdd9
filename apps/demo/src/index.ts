/**
 * The demo as a library, for tests and embedding: `buildDemo(config)` and `loadConfig(env)`.
 */
export { buildDemo, type Demo } from './app.js';
export { loadConfig, type DemoConfig } from './config.js';
export { seed, DEMO_ACCOUNTS, type Credentials } from './seed.js';
