import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', memory: 'src/memory.ts', 'testing/index': 'src/testing/index.ts' },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  external: ['vitest'],
});
