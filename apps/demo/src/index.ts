/**
 * The demo as a library, for tests and embedding: `buildDemo(config)` and `loadConfig(env)`.
 */
export { buildDemo, type Demo } from './app.js';
export { loadConfig, type DemoConfig } from './config.js';
export { startUp, bootstrapWorkspace, DEMO_ACCOUNTS, type Credentials, type StartUp, type StartUpOptions } from './seed.js';
