import { usageTable } from '../../../src/usage/usage-cli';

describe("the CLI's usage table", () => {
  it('aligns the groups left and the figures right, with a total line', () => {
    const rows = [
      { group: '2026-12-01', promptTokens: 1200, completionTokens: 300, totalTokens: 1500, costUsd: 0.0081, calls: 3 },
      { group: '2026-12-02', promptTokens: 10, completionTokens: 5, totalTokens: 15, costUsd: 0, calls: 1 },
    ];
    const totals = { promptTokens: 1210, completionTokens: 305, totalTokens: 1515, costUsd: 0.0081, calls: 4 };
    expect(usageTable('day', rows, totals).split('\n')).toEqual([
      'day         calls  prompt  completion  total  cost USD',
      '2026-12-01      3    1200         300   1500  0.008100',
      '2026-12-02      1      10           5     15  0.000000',
      'total           4    1210         305   1515  0.008100',
      '',
    ]);
  });
});
