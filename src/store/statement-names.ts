import type { QueryConfig } from 'pg';
import { errorMessage } from '../errors/switchyard-error';

/** SQLSTATE 0A000 with this message: a table changed under a prepared `SELECT *` (a migration ran meanwhile). */
const STALE_PLAN = 'cached plan must not change result type';

/**
 * Names each distinct statement, so that PostgreSQL parses and plans it once per connection
 * instead of on every call (pg prepares a named statement on a connection's first use of it).
 * On a short turn this halves PostgreSQL's CPU. Statements whose text is built per call (a
 * VALUES list per row) stop being named once `max` names exist, which bounds what each
 * connection keeps.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();
  private generation = 0;

  constructor(private readonly max = 1000) {}

  config(sql: string, params: unknown[] | undefined): QueryConfig {
    if (!params || params.length === 0) return { text: sql };
    let name = this.names.get(sql);
    if (!name) {
      if (this.names.size >= this.max) return { text: sql, values: params };
      name = `sy${this.generation}_${this.names.size}`;
      this.names.set(sql, name);
    }
    return { name, text: sql, values: params };
  }

  /**
   * True for the error of a statement prepared before a migration changed its table. New names
   * are handed out from then on, so every connection prepares its statements afresh.
   */
  renewAfter(error: unknown): boolean {
    const stale = (error as { code?: string }).code === '0A000' && errorMessage(error).includes(STALE_PLAN);
    if (stale) {
      this.names.clear();
      this.generation++;
    }
    return stale;
  }
}
