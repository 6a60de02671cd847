import { eventFrame, parseClientFrame } from '../../../src/gateway/frames';
import { isOriginAllowed } from '../../../src/auth/origin-policy';

describe('parseClientFrame', () => {
  it('accepts the frames of the contract', () => {
    expect(parseClientFrame('{"type":"subscribe","conversationId":"c","after":3}')).toEqual({
      ok: true,
      frame: { type: 'subscribe', conversationId: 'c', after: 3 },
    });
    expect(parseClientFrame('{"type":"ping"}')).toEqual({ ok: true, frame: { type: 'ping' } });
    expect(parseClientFrame('{"type":"subscribe","batchId":"b"}')).toEqual({ ok: true, frame: { type: 'subscribe', batchId: 'b' } });
    expect(parseClientFrame('{"type":"unsubscribe","batchId":"b"}')).toEqual({ ok: true, frame: { type: 'unsubscribe', batchId: 'b' } });
    expect(parseClientFrame('{"type":"tool-result","turnId":"t","toolCallId":"x","result":{"a":1}}')).toMatchObject({ ok: true });
    expect(parseClientFrame('{"type":"tool-result","turnId":"t","toolCallId":"x","error":{"code":"e","message":"m"}}')).toMatchObject({ ok: true });
  });

  it('names what is wrong with a bad frame', () => {
    expect(parseClientFrame('not json')).toMatchObject({ ok: false, code: 'bad_frame' });
    expect(parseClientFrame('{"type":"dance"}')).toMatchObject({ ok: false, code: 'unknown_frame' });
    expect(parseClientFrame('{"type":"dance"}')).toMatchObject({
      message: 'unknown frame type "dance"; expected one of subscribe, unsubscribe, tool-result, tool-approval, ping',
    });
    expect(parseClientFrame('[1,2]')).toMatchObject({ ok: false, code: 'unknown_frame' });
    // In zod's words, as everywhere else input is refused (the schemas are zod/mini's, which brings none).
    expect(parseClientFrame('{"type":"subscribe"}')).toEqual({ ok: false, code: 'bad_frame', message: 'invalid subscribe frame: "conversationId" is required' });
    expect(parseClientFrame('{"type":"subscribe","conversationId":"c","after":-1}')).toEqual({
      ok: false,
      code: 'bad_frame',
      message: 'invalid subscribe frame: "after": Too small: expected number to be >=0',
    });
    expect(parseClientFrame('{"type":"subscribe","batchId":"","after":1}')).toMatchObject({ ok: false, code: 'bad_frame', message: expect.stringContaining('batchId') });
    expect(parseClientFrame('{"type":"ping","extra":true}')).toMatchObject({ ok: false, code: 'bad_frame' });
    expect(parseClientFrame('{"type":"tool-result","turnId":"t","toolCallId":"x","error":"no"}')).toMatchObject({ ok: false, code: 'bad_frame' });
  });

  it('refuses what the database could not store as a bad frame', () => {
    expect(parseClientFrame('{"type":"tool-result","turnId":"t","toolCallId":"x","result":{"text":"\\\\u0000 is just text"}}')).toMatchObject({ ok: true });
    expect(parseClientFrame('{"type":"tool-result","turnId":"t","toolCallId":"x","result":{"text":"\\u0000"}}')).toEqual({
      ok: false,
      code: 'bad_frame',
      message: expect.stringContaining('result.text'),
    });
    expect(parseClientFrame('{"type":"subscribe","conversationId":"\ud800"}')).toMatchObject({ ok: false, code: 'bad_frame' });
  });

  it('wraps an event without re-encoding it', () => {
    const json = '{"seq":1,"type":"text-delta","delta":"é\\u0000"}';
    expect(JSON.parse(eventFrame(json))).toEqual({ type: 'event', event: JSON.parse(json) });
  });
});

describe('isOriginAllowed', () => {
  it('lets in clients that send no Origin (not a browser)', () => {
    expect(isOriginAllowed(undefined, 'api:3000', [])).toBe(true);
  });

  it('allows only the API origin itself without an allow-list', () => {
    expect(isOriginAllowed('http://api:3000', 'api:3000', [])).toBe(true);
    expect(isOriginAllowed('https://evil.example', 'api:3000', [])).toBe(false);
    expect(isOriginAllowed('null', 'api:3000', [])).toBe(false);
  });

  it('allows exactly the listed origins', () => {
    expect(isOriginAllowed('https://app.example', 'api:3000', ['https://app.example'])).toBe(true);
    expect(isOriginAllowed('https://app.example.evil', 'api:3000', ['https://app.example'])).toBe(false);
    expect(isOriginAllowed('https://anything', 'api:3000', ['*'])).toBe(true);
  });
});
