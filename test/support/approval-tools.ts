/**
 * The http tool the approval tests gate: `transfer` (to, amount), declared with `needsApproval`,
 * calling `<url>/transfer` on a test tool server. `overrides` adds or replaces fields.
 */
export function transferTool(serverUrl: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'transfer',
    description: 'Moves money',
    url: `${serverUrl}/transfer`,
    timeoutMs: 2000,
    retries: 0,
    needsApproval: true,
    fields: [
      { name: 'to', required: true },
      { name: 'amount', type: 'integer', required: true },
    ],
    ...overrides,
  };
}
