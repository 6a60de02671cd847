import { ConfigError, loadConfig } from '../../../src/config/config';

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ PORT: 3000, HOST: '127.0.0.1', LLM_MODEL: 'scripted', REDIS_PREFIX: 'switchyard', LOG_LEVEL: 'info' });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.ALLOWED_ORIGINS).toEqual([]);
  });

  it('names the variable and the problem in one line', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/^invalid configuration: "PORT": .+$/);
    expect(() => loadConfig({ REDIS_URL: 'not a url' })).toThrow(/REDIS_URL/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
  });

  it('splits ALLOWED_ORIGINS and ignores variables it does not know', () => {
    const config = loadConfig({ ALLOWED_ORIGINS: 'https://a.example, https://b.example', UNRELATED: 'x' });
    expect(config.ALLOWED_ORIGINS).toEqual(['https://a.example', 'https://b.example']);
    expect(Object.isFrozen(config)).toBe(true);
  });
});
