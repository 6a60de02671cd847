import { SecretBox } from '../../../src/webhooks/secret-box';

describe('SecretBox', () => {
  it('opens what it sealed, and the sealed text holds no trace of the secret', () => {
    const box = new SecretBox('a key of at least thirty-two characters');
    const sealed = box.seal('whsec_c2VjcmV0');
    expect(sealed).not.toContain('c2VjcmV0');
    expect(box.seal('whsec_c2VjcmV0')).not.toBe(sealed);
    expect(box.open(sealed)).toBe('whsec_c2VjcmV0');
  });

  it('refuses to open with another key, or a text tampered with', () => {
    const sealed = new SecretBox('a key of at least thirty-two characters').seal('whsec_c2VjcmV0');
    expect(() => new SecretBox('another key of thirty-two characters or more').open(sealed)).toThrow();
    const [version, iv, tag, text] = sealed.split('.');
    const flipped = Buffer.from(text!, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => new SecretBox('a key of at least thirty-two characters').open([version, iv, tag, flipped.toString('base64url')].join('.'))).toThrow();
  });
});
