import { fairPriority } from '../../../src/queue/turn-queue';

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
