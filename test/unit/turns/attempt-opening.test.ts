import { attemptOpeningEvents } from '../../../src/turns/attempt-opening';

describe('attemptOpeningEvents', () => {
  it('opens a first attempt with turn-start alone', () => {
    expect(attemptOpeningEvents({ attempt: 1, committedStep: 0, previousStatus: 'queued', marker: null })).toEqual([{ type: 'turn-start', attempt: 1 }]);
  });

  it('discards the step an earlier attempt streamed but never committed, as its marker says', () => {
    expect(attemptOpeningEvents({ attempt: 3, committedStep: 1, previousStatus: 'running', marker: { attempt: 2, step: 2 } })).toEqual([
      { type: 'turn-start', attempt: 3 },
      { type: 'attempt-discarded', attempt: 2, step: 2 },
    ]);
  });

  it('discards nothing for a marker of a step that was committed', () => {
    expect(attemptOpeningEvents({ attempt: 2, committedStep: 2, previousStatus: 'running', marker: { attempt: 1, step: 2 } })).toEqual([{ type: 'turn-start', attempt: 2 }]);
  });

  it('discards the next step of the previous attempt when a running turn left no marker (Redis lost it)', () => {
    expect(attemptOpeningEvents({ attempt: 2, committedStep: 0, previousStatus: 'running', marker: null })).toEqual([
      { type: 'turn-start', attempt: 2 },
      { type: 'attempt-discarded', attempt: 1, step: 1 },
    ]);
  });

  it('discards nothing without a marker when the turn was not running (a retry waited in the queue)', () => {
    expect(attemptOpeningEvents({ attempt: 2, committedStep: 0, previousStatus: 'queued', marker: null })).toEqual([{ type: 'turn-start', attempt: 2 }]);
  });
});
