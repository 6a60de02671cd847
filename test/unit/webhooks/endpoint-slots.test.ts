import { EndpointSlots } from '../../../src/webhooks/endpoint-slots';

describe('EndpointSlots', () => {
  it('gives an endpoint at most its cap of slots, and one more once one is released', () => {
    const slots = new EndpointSlots(2);
    const first = slots.take('wh_a');
    const second = slots.take('wh_a');
    expect(first).not.toBeNull();
    expect(second).not.toBeNull();
    expect(slots.take('wh_a')).toBeNull();
    first!();
    expect(slots.take('wh_a')).not.toBeNull();
    expect(slots.take('wh_a')).toBeNull();
  });

  it('counts each endpoint apart: a full one leaves the others their slots', () => {
    const slots = new EndpointSlots(1);
    expect(slots.take('wh_a')).not.toBeNull();
    expect(slots.take('wh_a')).toBeNull();
    expect(slots.take('wh_b')).not.toBeNull();
  });

  it('frees a slot once however often it is released', () => {
    const slots = new EndpointSlots(2);
    const first = slots.take('wh_a')!;
    slots.take('wh_a');
    first();
    first();
    expect(slots.take('wh_a')).not.toBeNull();
    expect(slots.take('wh_a')).toBeNull();
  });
});
