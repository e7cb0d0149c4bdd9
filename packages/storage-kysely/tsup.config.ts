import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', sqlite: 'src/entry-sqlite.ts', postgres: 'src/entry-postgres.ts', testing: 'src/testing.ts' },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
});
