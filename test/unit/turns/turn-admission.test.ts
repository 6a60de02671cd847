import type { Turn } from '../../../src/store/turns-repository';
import { admitTurn } from '../../../src/turns/turn-admission';

const turn = (id: string, requestHash = 'h') => ({ id, requestHash }) as Turn;

describe('admitTurn', () => {
  it('replays a repeated idempotency key with the same request, and refuses another request', () => {
    expect(admitTurn({ existingForKey: turn('t1', 'h'), requestHash: 'h', activeTurns: [], onBusy: 'reject' })).toEqual({
      kind: 'replay',
      turn: turn('t1', 'h'),
    });
    expect(admitTurn({ existingForKey: turn('t1', 'h'), requestHash: 'other', activeTurns: [], onBusy: 'reject' }).kind).toBe('idempotency_conflict');
  });

  it('creates and enqueues a turn on an idle conversation', () => {
    expect(admitTurn({ existingForKey: null, requestHash: 'h', activeTurns: [], onBusy: 'reject' })).toEqual({
      kind: 'create',
      enqueueNow: true,
      interrupt: [],
    });
  });

  it('follows onBusy on a busy conversation', () => {
    const active = [turn('running')];
    expect(admitTurn({ existingForKey: null, requestHash: 'h', activeTurns: active, onBusy: 'reject' })).toEqual({
      kind: 'busy',
      activeTurnId: 'running',
    });
    expect(admitTurn({ existingForKey: null, requestHash: 'h', activeTurns: active, onBusy: 'enqueue' })).toEqual({
      kind: 'create',
      enqueueNow: false,
      interrupt: [],
    });
    expect(admitTurn({ existingForKey: null, requestHash: 'h', activeTurns: active, onBusy: 'interrupt' })).toEqual({
      kind: 'create',
      enqueueNow: true,
      interrupt: active,
    });
  });
});
