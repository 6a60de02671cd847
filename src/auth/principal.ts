/** Who a request acts for: the user, and the API key it authenticated with. */
export interface Principal {
  userId: string;
  keyId: string;
  /** Set when the request came with a session token rather than the API key itself. */
  viaSession?: boolean;
  /** A session token's limit: the ids of the agents its turns may run on (absent: any). */
  agents?: readonly string[];
}
