import { describe, expect, it } from 'vitest';
import { InboxKitError } from './errors.js';
import { resumePosition, resyncFor } from './stream-resume.js';

const rejection = (run: () => unknown): InboxKitError => {
  try {
    run();
  } catch (error) {
    if (error instanceof InboxKitError) return error;
    throw error;
  }
  throw new Error('expected an InboxKitError');
};

describe('resumePosition', () => {
  it('neither given → 0; an empty header counts as absent', () => {
    expect(resumePosition(undefined, undefined)).toBe(0);
    expect(resumePosition(undefined, '')).toBe(0);
  });

  it('one given → that one', () => {
    expect(resumePosition(24, undefined)).toBe(24);
    expect(resumePosition(undefined, '25')).toBe(25);
    expect(resumePosition(0, '0')).toBe(0);
  });

  it('both given → the later of the two, whichever carries it (the EventSource reconnect case)', () => {
    expect(resumePosition(24, '25')).toBe(25);
    expect(resumePosition(30, '25')).toBe(30);
    expect(resumePosition(7, '7')).toBe(7);
  });

  it('accepts the largest safe integer and leading zeros', () => {
    expect(resumePosition(undefined, '9007199254740991')).toBe(9007199254740991);
    expect(resumePosition(undefined, '0025')).toBe(25);
  });

  it.each([
    ['-1'], ['1.5'], ['+3'], ['0x10'], [' 5'], ['5 '], ['abc'], ['1e3'], ['9007199254740992'], ['99999999999999999999'], ['25, 26'],
  ])('a malformed Last-Event-ID %j → 400 validation_error naming the header', (header) => {
    const error = rejection(() => resumePosition(3, header));
    expect(error.code).toBe('validation_error');
    expect(error.details).toEqual([{ path: 'Last-Event-ID', message: 'Expected a decimal integer from 0 to 9007199254740991', code: 'invalid_resume_position' }]);
  });

  it('a repeated header (an array) is malformed too', () => {
    expect(rejection(() => resumePosition(undefined, ['1', '2'])).code).toBe('validation_error');
  });
});

describe('resyncFor', () => {
  it('no signal for 0, a stored position, or exactly the latest', () => {
    expect(resyncFor(0, 0)).toBeUndefined();
    expect(resyncFor(0, 148)).toBeUndefined();
    expect(resyncFor(100, 148)).toBeUndefined();
    expect(resyncFor(148, 148)).toBeUndefined();
  });

  it('a position after the latest → resync carrying both positions', () => {
    expect(resyncFor(151, 148)).toEqual({ type: 'resync', reason: 'ahead_of_latest', requested_after: 151, latest: 148 });
    expect(resyncFor(1, 0)).toEqual({ type: 'resync', reason: 'ahead_of_latest', requested_after: 1, latest: 0 });
  });
});
