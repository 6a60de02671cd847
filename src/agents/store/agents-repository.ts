import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../../store/db';
import type { AgentConfig } from './agent-config';

/** One version of an agent, with what is the agent's as a whole. */
export interface AgentVersion {
  id: string;
  version: number;
  latestVersion: number;
  config: AgentConfig;
  /** The version this one was restored from. */
  restoredFrom: number | null;
  archivedAt: string | null;
  /** When this version was made. */
  createdAt: string;
  /** When the agent's first version was made. */
  agentCreatedAt: string;
}

/** What appending a version did: a refusal is a result, not an error, so the routes word it. */
export type AppendOutcome = { kind: 'appended'; agent: AgentVersion } | { kind: 'missing' } | { kind: 'archived' } | { kind: 'no_such_version' } | { kind: 'name_taken' };

interface VersionRow {
  id: string;
  version: number;
  latest_version: number;
  config: AgentConfig;
  restored_from: number | null;
  archived_at: Date | null;
  created_at: Date;
  agent_created_at: Date;
  ordinal?: string | number;
}

const SELECT_VERSION = `SELECT a.id, v.version, a.latest_version, v.config, v.restored_from, a.archived_at, v.created_at, a.created_at AS agent_created_at, a.ordinal
  FROM agents a JOIN agent_versions v ON v.agent_id = a.id`;

/** A unique index refused the row (the same code from PostgreSQL and PGlite). */
const isUniqueViolation = (error: unknown) => (error as { code?: unknown } | null)?.code === '23505';

/** Agents and their versions (migrations/0040_agents.sql). A version, once written, is never updated. */
export class AgentsRepository {
  constructor(
    private readonly db: Db,
    private readonly generateId: () => string = () => `agent_${randomUUID().replaceAll('-', '')}`,
  ) {}

  /** Version 1 of a new agent; null when the user has an agent of that name already. */
  async create(userId: string, config: AgentConfig): Promise<AgentVersion | null> {
    const id = this.generateId();
    try {
      return await this.db.transaction(async (tx) => {
        await tx.query('INSERT INTO agents (id, user_id, name, latest_version) VALUES ($1, $2, $3, 1)', [id, userId, config.name]);
        await tx.query('INSERT INTO agent_versions (agent_id, version, config) VALUES ($1, 1, $2)', [id, JSON.stringify(config)]);
        return (await this.version(userId, id, 1, tx))!;
      });
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  /** The agent's latest version, or version `version`; archived agents too (they can be read). */
  async version(userId: string, id: string, version: number | null = null, db: Queryable = this.db): Promise<AgentVersion | null> {
    const { rows } = await db.query<VersionRow>(`${SELECT_VERSION} WHERE a.id = $1 AND a.user_id = $2 AND v.version = COALESCE($3::int, a.latest_version)`, [id, userId, version]);
    return rows[0] ? toAgentVersion(rows[0]) : null;
  }

  /** The latest version of each agent of the user's not archived, newest agent first, a page after `before` (an ordinal). */
  async list(userId: string, page: { limit: number; before?: string }): Promise<{ data: AgentVersion[]; nextCursor: string | null }> {
    const { rows } = await this.db.query<VersionRow>(
      `${SELECT_VERSION} AND v.version = a.latest_version
       WHERE a.user_id = $1 AND a.archived_at IS NULL AND ($2::bigint IS NULL OR a.ordinal < $2::bigint)
       ORDER BY a.ordinal DESC LIMIT $3`,
      [userId, page.before ?? null, page.limit + 1],
    );
    const data = rows.slice(0, page.limit).map(toAgentVersion);
    const last = rows[page.limit - 1];
    return { data, nextCursor: rows.length > page.limit && last ? String(last.ordinal) : null };
  }

  /** Every version of the agent, newest first; null when the user has no such agent. */
  async versions(userId: string, id: string): Promise<AgentVersion[] | null> {
    const { rows } = await this.db.query<VersionRow>(`${SELECT_VERSION} WHERE a.id = $1 AND a.user_id = $2 ORDER BY v.version DESC`, [id, userId]);
    return rows.length > 0 ? rows.map(toAgentVersion) : null;
  }

  /**
   * Writes the next version, made by `next` from the latest (a patch) or from version `from` (a
   * restore), under the agent's row lock: two PATCHes at once make two versions, one after the other.
   */
  async append(userId: string, id: string, next: (base: AgentConfig) => Promise<AgentConfig>, from: number | null = null): Promise<AppendOutcome> {
    try {
      return await this.db.transaction(async (tx): Promise<AppendOutcome> => {
        const { rows } = await tx.query<{ latest_version: number; archived_at: Date | null }>(
          'SELECT latest_version, archived_at FROM agents WHERE id = $1 AND user_id = $2 FOR UPDATE',
          [id, userId],
        );
        const agent = rows[0];
        if (!agent) return { kind: 'missing' };
        if (agent.archived_at) return { kind: 'archived' };
        const base = await this.version(userId, id, from ?? agent.latest_version, tx);
        if (!base) return { kind: 'no_such_version' };
        const config = await next(base.config);
        const version = agent.latest_version + 1;
        await tx.query('INSERT INTO agent_versions (agent_id, version, config, restored_from) VALUES ($1, $2, $3, $4)', [id, version, JSON.stringify(config), from]);
        await tx.query('UPDATE agents SET latest_version = $2, name = $3, updated_at = clock_timestamp() WHERE id = $1', [id, version, config.name]);
        return { kind: 'appended', agent: (await this.version(userId, id, version, tx))! };
      });
    } catch (error) {
      if (isUniqueViolation(error)) return { kind: 'name_taken' };
      throw error;
    }
  }

  /** Archives the agent (its versions stay readable); false when the user has no such agent. */
  async archive(userId: string, id: string): Promise<boolean> {
    const { rows } = await this.db.query(
      'UPDATE agents SET archived_at = COALESCE(archived_at, clock_timestamp()), updated_at = clock_timestamp() WHERE id = $1 AND user_id = $2 RETURNING id',
      [id, userId],
    );
    return rows.length > 0;
  }

  /**
   * A new reference's agent: by id or by name, the user's, not archived, and with version
   * `version` when one is pinned. `version` null in the answer: the latest at each turn.
   */
  async findReferable(
    userId: string,
    reference: { key: string; version: number | null },
    db: Queryable = this.db,
  ): Promise<{ id: string; version: number | null; latest: AgentVersion } | null> {
    const byId = reference.key.startsWith('agent_');
    const { rows } = await db.query<VersionRow>(
      `${SELECT_VERSION} AND v.version = a.latest_version
       WHERE a.user_id = $1 AND a.archived_at IS NULL AND ${byId ? 'a.id' : 'a.name'} = $2 AND ($3::int IS NULL OR $3::int <= a.latest_version)`,
      [userId, reference.key, reference.version],
    );
    const row = rows[0];
    return row ? { id: row.id, version: reference.version, latest: toAgentVersion(row) } : null;
  }
}

function toAgentVersion(row: VersionRow): AgentVersion {
  return {
    id: row.id,
    version: row.version,
    latestVersion: row.latest_version,
    config: row.config,
    restoredFrom: row.restored_from,
    archivedAt: row.archived_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    agentCreatedAt: row.agent_created_at.toISOString(),
  };
}
