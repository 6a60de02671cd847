import type { Price } from '../../src/models/models-file-schema';
import type { TestStackOptions } from './stack';
import { startTwoProviderStack, type TwoProviderStack } from './two-providers';

/**
 * The two-provider stack (two-providers.ts) with its model `duo` priced: the first target at
 * `first`, the second at `second`, or unpriced without it (its calls then cost 0 and are
 * `priced: false`). The usage and budget tests' stack.
 */
export function startPricedStack(prices: { first: Price; second?: Price }, options: TestStackOptions = {}): Promise<TwoProviderStack> {
  return startTwoProviderStack({
    ...options,
    models: {
      duo: {
        targets: [
          { provider: 'first', model: 'scripted', price: prices.first },
          { provider: 'second', model: 'scripted', ...(prices.second ? { price: prices.second } : {}) },
        ],
      },
    },
  });
}
