import { ArrivalCounter } from '../../../src/scripted-model/arrival-counter';
import { RequestLog, type RecordedRequest } from '../../../src/scripted-model/request-log';

const recorded = (n: number): RecordedRequest => ({ method: 'POST', path: '/v1/chat/completions', headers: {}, body: { n }, receivedAt: n });

describe('RequestLog', () => {
  it('keeps the newest requests, in the same array', () => {
    const log = new RequestLog(3);
    const requests = log.requests;
    for (let n = 1; n <= 5; n++) log.record(recorded(n));
    expect(requests.map((request) => request.receivedAt)).toEqual([3, 4, 5]);
  });

  it('resolves a waiter with a past or a future match, and rejects on timeout or close', async () => {
    const log = new RequestLog(10);
    log.record(recorded(1));
    await expect(log.waitFor((request) => request.receivedAt === 1, 1000)).resolves.toMatchObject({ receivedAt: 1 });
    const future = log.waitFor((request) => request.receivedAt === 2, 1000);
    log.record(recorded(2));
    await expect(future).resolves.toMatchObject({ receivedAt: 2 });
    await expect(log.waitFor(() => false, 5)).rejects.toThrow('no matching request within 5 ms (2 recorded)');
    const pending = log.waitFor(() => false, 10_000);
    log.close();
    await expect(pending).rejects.toThrow('closed');
  });
});

describe('ArrivalCounter', () => {
  it('counts arrivals of the same messages, forgetting the least recently seen past its bound', () => {
    const counter = new ArrivalCounter(2);
    const a = [{ role: 'user', content: 'a' }];
    const b = [{ role: 'user', content: 'b' }];
    const c = [{ role: 'user', content: 'c' }];
    expect([counter.next(a), counter.next(a), counter.next(b), counter.next(a)]).toEqual([0, 1, 0, 2]);
    counter.next(c); // b is now the least recently seen, and goes
    expect([counter.next(a), counter.next(b)]).toEqual([3, 0]);
  });
});
