import { AppError } from '../errors/app-error';
import type { BranchKind, MessageOutline } from '../store/messages-repository';
import { findPathFault } from './path-fault';

/**
 * What a regenerate or an edit asks of admission: the user message on the conversation's path
 * it starts from (a row id), or (null) for a regenerate that names none, the last one.
 */
export interface BranchRequest {
  kind: BranchKind;
  from: string | null;
  /** The request field that named the message, for the error when it names none. */
  field: string;
}

/**
 * The refusal of a branch whose message is not a user message on this conversation's path.
 * The same for a message that does not exist, is another conversation's or user's, was
 * replaced, or is not a user message, so that it tells nothing of others' data.
 */
export function noBranchPoint(branch: BranchRequest): AppError {
  const message =
    branch.from === null
      ? 'the conversation has no user message to answer again'
      : "is not a user message on this conversation's path (see GET /v1/conversations/:id: an id of a message without supersededBy)";
  return new AppError('invalid_request', `invalid request: ${branch.field}: ${message}`, [{ field: branch.field, message }]);
}

/**
 * The refusal of a branch whose turn would send a history providers refuse (tool-exchange-fault.ts),
 * or undefined. `before`: the path up to the branch point, with it for a regenerate (which
 * answers it again); an edit's new message, plain text or parts, follows it. Only a message
 * that carries a caller's function outputs (the OpenAI routes) leaves calls without results
 * when it is replaced, but any fault of the path is refused: the turn could never run.
 */
export function unacceptableBranch(branch: BranchRequest, before: readonly MessageOutline[], pointRowId: string): AppError | undefined {
  const replacement: MessageOutline = { rowId: pointRowId, role: 'user', tool_calls: [], tool_call_id: null };
  const history = branch.kind === 'edit' ? [...before, replacement] : before;
  const fault = findPathFault(history);
  if (!fault) return undefined;
  const answeredByPoint = branch.kind === 'edit' && fault.fault.kind === 'unanswered' && fault.fault.index === history.length - 2;
  const message =
    `${branch.kind === 'edit' ? 'an edit' : 'a regenerate'} of it would send a history providers refuse: ${fault.text}` +
    (answeredByPoint ? ' (the message it replaces answers them): regenerate it, or edit an earlier message' : '');
  return new AppError('invalid_request', `invalid request: ${branch.field}: ${message}`, [{ field: branch.field, message }]);
}
