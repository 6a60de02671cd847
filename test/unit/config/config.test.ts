import { ConfigError, loadConfig } from '../../../src/config/config';

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ PORT: 3000, HOST: '127.0.0.1', LLM_MODEL: 'scripted', REDIS_PREFIX: 'switchyard', LOG_LEVEL: 'info', LOG_FORMAT: 'json' });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.ALLOWED_ORIGINS).toEqual([]);
    // Above a load balancer's usual 60 s idle timeout (README, "Configuration").
    expect(config.KEEP_ALIVE_TIMEOUT_MS).toBe(65_000);
  });

  it('gives webhooks the contract\'s figures by default (docs/API.md, "Webhooks")', () => {
    const config = loadConfig({});
    // Each attempt times out after 10 s.
    expect(config.WEBHOOK_TIMEOUT_MS).toBe(10_000);
    // The first retries within seconds (about 5 s, then 30 s), then backing off (each wait at least
    // double the one before) up to hourly, for up to 24 h.
    const delays = config.WEBHOOK_RETRY_DELAYS_MS;
    expect(delays.slice(0, 2)).toEqual([5_000, 30_000]);
    for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThanOrEqual(2 * delays[i - 1]!);
    expect(delays.at(-1)).toBe(3600_000);
    expect(config.WEBHOOK_RETRY_FOR_MS).toBe(24 * 3600_000);
    // An endpoint failing for 3 days is disabled.
    expect(config.WEBHOOK_DISABLE_AFTER_MS).toBe(3 * 24 * 3600_000);
    // Inside addresses are refused unless allowed.
    expect(config.WEBHOOK_ALLOW_PRIVATE_NETWORKS).toBe(false);
  });

  it('names the variable and the problem in one line', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/^invalid configuration: "PORT": .+$/);
    expect(() => loadConfig({ REDIS_URL: 'not a url' })).toThrow(/REDIS_URL/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
    expect(() => loadConfig({ LOG_FORMAT: 'colourful' })).toThrow(/LOG_FORMAT/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });

  it('turns tracing on only with an OTLP endpoint (an empty one is unset)', () => {
    expect(loadConfig({}).OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }).OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://collector:4318');
  });

  it('splits ALLOWED_ORIGINS and ignores variables it does not know', () => {
    const config = loadConfig({ ALLOWED_ORIGINS: 'https://a.example, https://b.example', UNRELATED: 'x' });
    expect(config.ALLOWED_ORIGINS).toEqual(['https://a.example', 'https://b.example']);
    expect(Object.isFrozen(config)).toBe(true);
  });
});

describe('DATABASE_LISTEN_URL', () => {
  it('is DATABASE_URL unless set', () => {
    const databaseUrl = 'postgresql://switchyard@pgbouncer:6432/switchyard';
    const listenUrl = 'postgresql://switchyard@postgres:5432/switchyard';
    expect(loadConfig({ DATABASE_URL: databaseUrl }).DATABASE_LISTEN_URL).toBe(databaseUrl);
    expect(loadConfig({ DATABASE_URL: databaseUrl, DATABASE_LISTEN_URL: '' }).DATABASE_LISTEN_URL).toBe(databaseUrl);
    expect(loadConfig({ DATABASE_URL: databaseUrl, DATABASE_LISTEN_URL: listenUrl }).DATABASE_LISTEN_URL).toBe(listenUrl);
    expect(loadConfig({}).DATABASE_LISTEN_URL).toBeUndefined();
  });

  it('is refused without DATABASE_URL: a PostgreSQL was meant, not the embedded database', () => {
    expect(() => loadConfig({ DATABASE_LISTEN_URL: 'postgresql://switchyard@postgres:5432/switchyard' })).toThrow(
      /^invalid configuration: "DATABASE_LISTEN_URL": needs DATABASE_URL .*unset DATABASE_LISTEN_URL$/,
    );
    expect(() => loadConfig({ DATABASE_URL: 'postgresql://switchyard@postgres:5432/switchyard', DATABASE_LISTEN_URL: 'postgres' })).toThrow(/"DATABASE_LISTEN_URL"/);
  });
});

describe('REDIS_CLUSTER_NODES', () => {
  it('takes host:port entries, and names the variable for a malformed one', () => {
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'redis-1:6379, redis-2:7000' }).REDIS_CLUSTER_NODES).toEqual([
      { host: 'redis-1', port: 6379 },
      { host: 'redis-2', port: 7000 },
    ]);
    expect(loadConfig({ REDIS_CLUSTER_NODES: '' }).REDIS_CLUSTER_NODES).toBeUndefined();
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'redis-1:6379,redis-2' })).toThrow(/^invalid configuration: "REDIS_CLUSTER_NODES.*host:port/);
  });
});
