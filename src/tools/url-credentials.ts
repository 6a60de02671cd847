/*
 * Credentials in a URL (`https://user:secret@host/`) travel wherever the URL is written: into
 * fetch's errors ("Request cannot be constructed from a URL that includes credentials: …"),
 * a redirect's `Location`, and from there to the model, the user and the logs. Tool files may
 * not carry them (headers with `${ENV_VAR}` do that job), and no error shows them. Pure.
 */

/** Whether the URL names a user or a password; false for text that is no URL. */
export function hasUrlCredentials(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const parsed = new URL(url);
  return parsed.username !== '' || parsed.password !== '';
}

/**
 * Every `scheme://` in the text up to its host's last `@` (the URL parser's own reading, so a
 * password holding an `@` goes whole) is written `scheme://***@`.
 */
const URL_USER_INFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@/gi;

/** The text with the user and password of every URL in it replaced by `***`. */
export function withoutUrlCredentials(text: string): string {
  return text.replace(URL_USER_INFO, '$1***@');
}
