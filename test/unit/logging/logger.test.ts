import { Writable } from 'node:stream';
import { createLogger } from '../../../src/logging/logger';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger('debug', destination), text: () => lines.join('') };
}

describe('createLogger', () => {
  it('redacts credential headers wherever a headers object is logged, in any usual spelling', () => {
    const { logger, text } = capture();
    logger.debug(
      {
        req: { headers: { authorization: 'secret-1', cookie: 'secret-2', accept: 'text/plain' } },
        headers: { Authorization: 'secret-3' },
        tool: { name: 'vault', headers: { Authorization: 'secret-4', 'X-Api-Key': 'secret-5' } },
        err: { request: { headers: { 'x-api-key': 'secret-6', 'Proxy-Authorization': 'secret-7' } } },
      },
      'headers',
    );
    expect(text()).not.toMatch(/secret-\d/);
    expect(JSON.parse(text())).toMatchObject({ req: { headers: { authorization: '[redacted]', accept: 'text/plain' } }, tool: { name: 'vault' } });
  });

  it('redacts keys, tokens and tickets by name', () => {
    const { logger, text } = capture();
    logger.info(
      { apiKey: 'secret-1', user: { apiKey: 'secret-2' }, config: { LLM_API_KEY: 'secret-3', ADMIN_TOKEN: 'secret-4' }, ticket: 'secret-5', session: { token: 'secret-6' } },
      'keys',
    );
    expect(text()).not.toMatch(/secret-\d/);
  });
});
