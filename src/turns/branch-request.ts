import { AppError } from '../errors/app-error';
import type { BranchKind } from '../store/messages-repository';

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
      : 'is not a user message on this conversation\'s path (see GET /v1/conversations/:id: an id of a message without supersededBy)';
  return new AppError('invalid_request', `invalid request: ${branch.field}: ${message}`, [{ field: branch.field, message }]);
}
