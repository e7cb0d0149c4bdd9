// Runs before every test file of every project: an EventEmitter listener leak
// (MaxListenersExceededWarning) during a file fails that file instead of scrolling past as noise.
import { afterAll, expect } from 'vitest';

const leaks: string[] = [];
const onWarning = (warning: Error) => {
  if (warning.name === 'MaxListenersExceededWarning') leaks.push(`${warning.message}\n${warning.stack ?? ''}`);
};
process.on('warning', onWarning);

afterAll(() => {
  process.off('warning', onWarning);
  expect(leaks, 'MaxListenersExceededWarning: a listener leaks (see the stacks)').toEqual([]);
});
