import { parseLiveMessage } from '../../../src/event-log/live-message';

describe('parseLiveMessage', () => {
  it('takes the append time out, leaving the event as the log stores it', () => {
    expect(parseLiveMessage('{"seq":12,"at":1700000000123,"type":"text-delta","delta":"hi"}')).toEqual({
      json: '{"seq":12,"type":"text-delta","delta":"hi"}',
      seq: 12,
      appendedAt: 1700000000123,
    });
  });

  it('reads a message without a time (an older producer) as it is', () => {
    const json = '{"seq":3,"type":"turn-cancelled"}';
    expect(parseLiveMessage(json)).toEqual({ json, seq: 3 });
  });

  it('gives seq 0 to what is not an event', () => {
    expect(parseLiveMessage('1')).toEqual({ json: '1', seq: 0 });
    // An "at" that is not right after the seq is the event's own field, left alone.
    const json = '{"seq":4,"type":"x","at":5}';
    expect(parseLiveMessage(json)).toEqual({ json, seq: 4 });
  });
});
