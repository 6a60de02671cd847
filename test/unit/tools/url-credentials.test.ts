import { hasUrlCredentials, withoutUrlCredentials } from '../../../src/tools/url-credentials';

describe('URL credentials', () => {
  it('finds a user or a password in a URL, and nothing in text that is no URL', () => {
    expect(hasUrlCredentials('https://svc:secret@api.example/x')).toBe(true);
    expect(hasUrlCredentials('https://svc@api.example/x')).toBe(true);
    expect(hasUrlCredentials('https://api.example/x?user=a@b')).toBe(false);
    expect(hasUrlCredentials('not a url')).toBe(false);
  });

  it('writes the credentials of every URL in a text as ***, a password holding an @ whole, and leaves the rest', () => {
    expect(withoutUrlCredentials('cannot fetch http://svc:secret@api.example/x: refused')).toBe('cannot fetch http://***@api.example/x: refused');
    expect(withoutUrlCredentials('https://a:p@ss@one.example and HTTPS://b:q@two.example/?to=c@d')).toBe('https://***@one.example and HTTPS://***@two.example/?to=c@d');
    expect(withoutUrlCredentials('mail ops@example.com about https://api.example/x?to=c@d')).toBe('mail ops@example.com about https://api.example/x?to=c@d');
  });
});
