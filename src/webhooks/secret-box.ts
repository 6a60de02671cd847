import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/**
 * Encrypts endpoint secrets at rest with AES-256-GCM. The signing secret must be read back to
 * sign (a hash would not do), so the database holds it encrypted under a key that lives only in
 * the configuration (WEBHOOK_SECRET_KEY): a copy of the database alone does not sign webhooks.
 * Stored as `v1.<iv>.<tag>.<ciphertext>` (base64url), the version leaving room for a new scheme.
 */
export class SecretBox {
  private readonly key: Buffer;

  /** Any string: it is hashed to the 32 bytes AES-256 takes. */
  constructor(keyMaterial: string) {
    this.key = createHash('sha256').update(keyMaterial).digest();
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const encrypted = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), encrypted.toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, encrypted] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || encrypted === undefined) throw new Error('not a sealed webhook secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(encrypted, 'base64url')), decipher.final()]).toString('utf8');
  }
}
