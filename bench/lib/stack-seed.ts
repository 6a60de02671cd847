import { withPostgres } from './backing-services';

/**
 * Rows written straight into a bench stack's schema (migrations/0001_init.sql, 0019), one statement
 * each, for the curves that need thousands of them: made through the API they would take
 * longer than what they are there to measure. They are what the API would store: messages of
 * a conversation in id order, user and assistant in turn, content a JSON string.
 */

/** The text of the `index`-th stored message: `chars` characters of words. */
export function historyText(index: number, chars: number): string {
  const head = `message ${index + 1}:`;
  return (head + ' lorem ipsum dolor sit amet'.repeat(Math.ceil(chars / 27))).slice(0, chars);
}

/** The role of the `index`-th stored message: a history starts with the user and alternates. */
export const historyRole = (index: number): 'user' | 'assistant' => (index % 2 === 0 ? 'user' : 'assistant');

/**
 * Appends `texts` (user, assistant, user, …) to each conversation, in one INSERT. `superseded`
 * (one flag per text): those are stored as an edit or a regenerate leaves what it replaced,
 * off the conversation's path.
 */
export async function insertHistory(schema: string, conversationIds: string[], texts: string[], superseded: boolean[] = texts.map(() => false)): Promise<void> {
  await withPostgres(async (client) => {
    await client.query(
      `INSERT INTO ${identifier(schema)}.messages (conversation_id, role, content, superseded_by)
       SELECT c.id, CASE WHEN m.position % 2 = 1 THEN 'user' ELSE 'assistant' END, to_jsonb(m.text),
              CASE WHEN m.superseded THEN 'turn_replaced_in_bench' END
         FROM unnest($1::text[]) WITH ORDINALITY AS c(id, position)
         CROSS JOIN unnest($2::text[], $3::boolean[]) WITH ORDINALITY AS m(text, superseded, position)
        ORDER BY c.position, m.position`,
      [conversationIds, texts, superseded],
    );
  });
}

/** Makes `count` conversations of the stack's user (the all-in-one's dev user), in one INSERT; returns their ids. */
export async function insertConversations(schema: string, count: number): Promise<string[]> {
  return withPostgres(async (client) => {
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO ${identifier(schema)}.conversations (id, user_id, title)
       SELECT 'conv_' || gen_random_uuid(), (SELECT user_id FROM ${identifier(schema)}.api_keys ORDER BY created_at LIMIT 1), 'bench'
         FROM generate_series(1, $1::int)
       RETURNING id`,
      [count],
    );
    return rows.map((row) => row.id);
  });
}

function identifier(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`not a schema name: ${schema}`);
  return schema;
}
