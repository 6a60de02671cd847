import { batchPriority, fairPriority } from '../../../src/queue/turn-queue';

describe('fairPriority', () => {
  it('puts a user with fewer active turns ahead of a user with many', () => {
    expect(fairPriority(1)).toBe(1);
    expect(fairPriority(1000)).toBe(1000);
    expect(fairPriority(1)).toBeLessThan(fairPriority(2));
  });

  it('stays within the range BullMQ accepts', () => {
    expect(fairPriority(0)).toBe(1);
    expect(fairPriority(10_000_000)).toBe(2_097_152);
  });
});

describe('batchPriority', () => {
  it("runs a less busy user's items first, whatever the batches' priorities", () => {
    // A user with 256 items active in a priority-9 batch, another with 8 in a priority-0 one.
    expect(batchPriority(0, 8)).toBeLessThan(batchPriority(9, 256));
    expect(batchPriority(0, 1)).toBeLessThan(batchPriority(9, 2));
  });

  it("orders equally busy users' batches, and a user's own batches, by priority, higher first", () => {
    expect(batchPriority(9, 40)).toBeLessThan(batchPriority(5, 40));
    expect(batchPriority(5, 40)).toBeLessThan(batchPriority(0, 40));
  });

  it('stays within the range BullMQ accepts', () => {
    expect(batchPriority(-3, 0)).toBeGreaterThanOrEqual(1);
    expect(batchPriority(12, 10_000_000)).toBeLessThanOrEqual(2_097_152);
    expect(batchPriority(0, 10_000_000)).toBeLessThanOrEqual(2_097_152);
  });
});
