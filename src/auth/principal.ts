/** Who a request acts for: the user, and the API key it authenticated with. */
export interface Principal {
  userId: string;
  keyId: string;
}
