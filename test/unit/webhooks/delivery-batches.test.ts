import { DeliveryBatches } from '../../../src/webhooks/delivery-batches';
import type { AttemptBasis, WebhooksRepository } from '../../../src/store/webhooks-repository';

/** A repository that records the statements it was asked for. */
function recordingRepository() {
  const reads: string[][] = [];
  const successes: { delivery: AttemptBasis; statusCode: number }[][] = [];
  const repository: Pick<WebhooksRepository, 'pendingWithEndpoints' | 'markDelivered'> = {
    async pendingWithEndpoints(ids) {
      reads.push([...ids]);
      // Only whd_1 is still pending.
      return new Map(ids.filter((id) => id === 'whd_1').map((id) => [id, { delivery: { id }, endpoint: { id: 'wh_1' } } as never]));
    },
    async markDelivered(batch) {
      successes.push([...batch]);
    },
  };
  return { repository, reads, successes };
}

/** A delivery as an attempt read it: its first run, not attempted yet. */
const attemptBasis = (id: string): AttemptBasis => ({ id, attempts: 0, redeliveredAt: null });

describe('delivery batches', () => {
  it('reads the deliveries of attempts starting together in one statement, each getting its own', async () => {
    const { repository, reads } = recordingRepository();
    const batches = new DeliveryBatches(repository);
    const [first, second] = await Promise.all([batches.pendingWithEndpoint('whd_1'), batches.pendingWithEndpoint('whd_2')]);
    expect(reads).toEqual([['whd_1', 'whd_2']]);
    expect(first).toMatchObject({ delivery: { id: 'whd_1' } });
    expect(second).toBeNull();
  });

  it('records the successes of attempts ending together in one statement, and only then resolves them', async () => {
    const { repository, successes } = recordingRepository();
    const batches = new DeliveryBatches(repository);
    const [first, second] = [attemptBasis('whd_1'), attemptBasis('whd_2')];
    await Promise.all([batches.markDelivered(first, 204), batches.markDelivered(second, 200)]);
    expect(successes).toEqual([
      [
        { delivery: first, statusCode: 204 },
        { delivery: second, statusCode: 200 },
      ],
    ]);
  });

  it('fails every attempt of a batch whose statement failed, so their jobs are retried', async () => {
    const batches = new DeliveryBatches({
      pendingWithEndpoints: async () => new Map(),
      markDelivered: async () => {
        throw new Error('database away');
      },
    });
    const results = await Promise.allSettled([batches.markDelivered(attemptBasis('whd_1'), 204), batches.markDelivered(attemptBasis('whd_2'), 204)]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
  });
});
