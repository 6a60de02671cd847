import { UsersRepository } from '../../../src/store/users-repository';
import { createTestDatabase } from '../../support/database';

describe('UsersRepository', () => {
  it('makes a user and its first key together or not at all', async () => {
    const { db, drop } = await createTestDatabase('postgres');
    try {
      const users = new UsersRepository(db);
      // The key's insert fails (as a lost connection or a full disk would make it): no user is left without it.
      await db.query(`CREATE FUNCTION refuse_key() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no keys today'; END $$`);
      await db.query('CREATE TRIGGER refuse_key BEFORE INSERT ON api_keys FOR EACH ROW EXECUTE FUNCTION refuse_key()');
      await expect(users.createUserWithKey('half-made')).rejects.toThrow('no keys today');
      expect((await users.listUsers()).map((user) => user.name)).not.toContain('half-made');

      await db.query('DROP TRIGGER refuse_key ON api_keys');
      const made = await users.createUserWithKey('whole');
      expect(await users.findUserByApiKey(made.apiKey)).toEqual({ userId: made.id, keyId: made.keyId });
    } finally {
      await drop();
    }
  });
});
