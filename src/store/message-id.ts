/**
 * A message's public id: `msg_` and its row's number. The number orders a conversation's
 * messages (one turn runs at a time), so the id is also where its place on the path is.
 */
export function formatMessageId(rowId: string | number | bigint): string {
  return `msg_${String(rowId)}`;
}

/** The row number of a public message id; null for text that is no message id (it names no message). */
export function parseMessageId(id: string): string | null {
  const match = /^msg_([1-9]\d{0,17})$/.exec(id);
  return match ? match[1]! : null;
}
