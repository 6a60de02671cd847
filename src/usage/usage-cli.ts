import { httpApi, type HttpOptions } from '@switchyard/client';

export interface UsageCliOptions extends HttpOptions {
  stdout: NodeJS.WritableStream;
  /** One user's, read through the admin route (the token is then ADMIN_TOKEN). */
  user?: string;
  from?: string;
  to?: string;
  by?: string;
}

interface UsageRow {
  group: string | null;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  costUsd: number;
  calls: number;
}

/** `npm run cli -- usage [--user ID] [--from T --to T] [--by day|model|conversation]`: a small table of the ledger's sums. */
export async function usageCommand(options: UsageCliOptions): Promise<void> {
  const query = new URLSearchParams({ groupBy: options.by ?? 'day' });
  if (options.from) query.set('from', options.from);
  if (options.to) query.set('to', options.to);
  if (options.user) query.set('userId', options.user);
  const path = options.user ? '/v1/admin/usage' : '/v1/usage';
  const report = await httpApi(options)<{ data: UsageRow[]; totals: Omit<UsageRow, 'group'> }>('GET', `${path}?${query}`);
  options.stdout.write(usageTable(options.by ?? 'day', report.data, report.totals));
}

/** The rows and their total, in columns aligned right (the group left). */
export function usageTable(groupName: string, rows: readonly UsageRow[], totals: Omit<UsageRow, 'group'>): string {
  const cells = [
    [groupName, 'calls', 'prompt', 'completion', 'total', 'cost USD'],
    ...[...rows, { group: 'total', ...totals }].map((row) => [
      row.group ?? '-',
      String(row.calls),
      String(row.promptTokens),
      String(row.completionTokens),
      String(row.totalTokens),
      row.costUsd.toFixed(6),
    ]),
  ];
  const widths = cells[0]!.map((_, column) => Math.max(...cells.map((line) => line[column]!.length)));
  return `${cells.map((line) => line.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ')).join('\n')}\n`;
}
