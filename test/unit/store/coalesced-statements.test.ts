import { CoalescedStatements } from '../../../src/store/coalesced-statements';

describe('CoalescedStatements', () => {
  it('sends the requests of one tick as one statement, answering each in order', async () => {
    const statements: number[][] = [];
    const coalesced = new CoalescedStatements<number, number>(async (inputs) => {
      statements.push(inputs);
      return inputs.map((input) => input * 10);
    });
    await expect(Promise.all([1, 2, 3].map((input) => coalesced.run(input)))).resolves.toEqual([10, 20, 30]);
    expect(statements).toEqual([[1, 2, 3]]);
  });

  it('fails only the request whose row the database refuses, the others sent again alone', async () => {
    const statements: number[][] = [];
    const coalesced = new CoalescedStatements<number, number>(async (inputs) => {
      statements.push(inputs);
      if (inputs.includes(2)) throw new Error('row 2 refused');
      return inputs;
    });
    const answers = await Promise.allSettled([1, 2, 3].map((input) => coalesced.run(input)));
    expect(answers).toEqual([
      { status: 'fulfilled', value: 1 },
      { status: 'rejected', reason: new Error('row 2 refused') },
      { status: 'fulfilled', value: 3 },
    ]);
    expect(statements).toEqual([[1, 2, 3], [1], [2], [3]]);
  });

  it('fails a request alone once, as the database answered it', async () => {
    let calls = 0;
    const coalesced = new CoalescedStatements<number, number>(async () => {
      calls++;
      throw new Error('database down');
    });
    await expect(coalesced.run(1)).rejects.toThrow('database down');
    expect(calls).toBe(1);
  });
});
