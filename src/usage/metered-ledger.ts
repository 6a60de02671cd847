import type { Metrics } from '../metrics/metrics';
import type { ProviderCall, ProviderCallsRepository } from '../store/provider-calls-repository';

/**
 * The ledger's writes, counted in the metrics as they land: only a line actually written counts,
 * so a call written again by a retried job or a later attempt is counted once, as in the ledger.
 */
export function meteredLedger(
  calls: Pick<ProviderCallsRepository, 'insert' | 'lastCounted'>,
  metrics: Pick<Metrics, 'ledgerTokens' | 'ledgerCost'>,
): Pick<ProviderCallsRepository, 'insert' | 'lastCounted'> {
  return {
    lastCounted: (...args) => calls.lastCounted(...args),
    async insert(call: ProviderCall, db?: Parameters<ProviderCallsRepository['insert']>[1]) {
      const written = await calls.insert(call, db);
      if (written) {
        const model = `${call.provider}/${call.model}`;
        metrics.ledgerTokens.inc({ model, kind: 'prompt' }, call.ledger.promptTokens);
        metrics.ledgerTokens.inc({ model, kind: 'completion' }, call.ledger.completionTokens);
        metrics.ledgerCost.inc({ model }, call.ledger.costUsd);
      }
      return written;
    },
  };
}
