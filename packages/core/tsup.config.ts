import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', 'http/index': 'src/http/index.ts', 'testing/index': 'src/testing/index.ts', 'testing/memory': 'src/testing/memory.ts' },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  external: ['vitest'],
});
