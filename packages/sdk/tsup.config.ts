import { defineConfig } from 'tsup';

// eventsource-parser is a devDependency bundled into dist, so the published SDK has zero runtime
// dependencies.
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  noExternal: ['eventsource-parser'],
});
