import DataLoader from 'dataloader';
import type { AttemptBasis, WebhookDelivery, WebhookEndpoint, WebhooksRepository } from '../store/webhooks-repository';

/** How long a read or a success waits for others to share its statement. */
const WINDOW_MS = 2;
/** At most this many deliveries per statement. */
const MAX_BATCH = 100;

/**
 * The two statements every delivery makes (its row read before the attempt, its success
 * recorded after), shared by the attempts running at once: jobs start in runs (a relay pass
 * adds its events together), and one statement for a run costs the database one transaction
 * and one commit instead of one each. Each attempt still waits for its own row to be read and
 * for its own success to be committed before its job completes, so nothing is acknowledged
 * that is not stored.
 */
export class DeliveryBatches {
  private readonly reads: DataLoader<string, { delivery: WebhookDelivery; endpoint: WebhookEndpoint } | null>;
  private readonly successes: DataLoader<{ delivery: AttemptBasis; statusCode: number }, void, string>;

  constructor(webhooks: Pick<WebhooksRepository, 'pendingWithEndpoints' | 'markDelivered'>) {
    const options = { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: (run: () => void) => setTimeout(run, WINDOW_MS) };
    this.reads = new DataLoader(async (ids) => {
      const found = await webhooks.pendingWithEndpoints(ids);
      return ids.map((id) => found.get(id) ?? null);
    }, options);
    this.successes = new DataLoader(async (successes) => {
      await webhooks.markDelivered(successes);
      return successes.map(() => undefined);
    }, options);
  }

  /** A pending delivery with its endpoint; null when there is nothing to send (delivered, failed, its endpoint deleted). */
  pendingWithEndpoint(id: string) {
    return this.reads.load(id);
  }

  /** Records a successful attempt of the delivery as it read it: the delivery is done and its endpoint no longer failing. */
  markDelivered(delivery: AttemptBasis, statusCode: number): Promise<void> {
    return this.successes.load({ delivery, statusCode });
  }
}
