import { parseToolFile } from '../../../src/tools/http/parse-tool-file';
import { ToolLoadError } from '../../../src/tools/tool-errors';

const weather = { name: 'weather', description: 'Forecast', url: 'https://api.example.com/weather', fields: [{ name: 'city', required: true }] };
const parse = (content: unknown, env: Record<string, string | undefined> = {}) => parseToolFile('tools/weather.json', JSON.stringify(content), env);
const loadError = (content: unknown, env: Record<string, string | undefined> = {}) => {
  try {
    parseToolFile('tools/weather.json', typeof content === 'string' ? content : JSON.stringify(content), env);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolLoadError);
    return (error as Error).message;
  }
  throw new Error('expected a load error');
};

describe('parseToolFile', () => {
  it('reads one tool, with the defaults', () => {
    expect(parse(weather)).toEqual([
      {
        kind: 'http',
        name: 'weather',
        description: 'Forecast',
        url: 'https://api.example.com/weather',
        method: 'POST',
        headers: {},
        timeoutMs: 10_000,
        retries: 2,
        inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
        source: 'tools/weather.json',
      },
    ]);
  });

  it('reads an array and {tools: [...]}', () => {
    const second = { ...weather, name: 'forecast', method: 'get', inputSchema: { type: 'object' }, fields: undefined };
    expect(parse([weather, second]).map((tool) => tool.name)).toEqual(['weather', 'forecast']);
    const [, fromTools] = parse({ tools: [weather, second] });
    expect(fromTools).toMatchObject({ name: 'forecast', method: 'GET', inputSchema: { type: 'object' } });
  });

  it('gives a tool without inputSchema or fields an empty closed object schema', () => {
    const [tool] = parse({ name: 'ping', description: 'Ping', url: 'http://127.0.0.1/ping' });
    expect(tool!.inputSchema).toEqual({ type: 'object', properties: {}, additionalProperties: false });
  });

  it('reads client tools: no url, a long default timeout, no retries', () => {
    const [tool] = parse({ kind: 'client', name: 'pick_file', description: 'Let the user pick a file', fields: [{ name: 'accept' }] });
    expect(tool).toEqual({
      kind: 'client',
      name: 'pick_file',
      description: 'Let the user pick a file',
      timeoutMs: 300_000,
      inputSchema: { type: 'object', properties: { accept: { type: 'string' } }, additionalProperties: false },
      source: 'tools/weather.json',
    });
  });

  it('substitutes ${ENV_VAR} in header values', () => {
    const [tool] = parse({ ...weather, headers: { Authorization: 'Bearer ${WEATHER_KEY}', 'X-Team': '${TEAM}-${REGION}' } }, { WEATHER_KEY: 's3cret', TEAM: 'a', REGION: 'eu' });
    expect(tool).toMatchObject({ headers: { Authorization: 'Bearer s3cret', 'X-Team': 'a-eu' } });
  });

  it('refuses a header that names a missing variable, naming the file, the field and the variable', () => {
    expect(loadError({ tools: [weather, { ...weather, name: 'w2', headers: { Authorization: 'Bearer ${WEATHER_KEY}' } }] })).toBe(
      'tools/weather.json: "tools[1].headers.Authorization": environment variable "WEATHER_KEY" is not set',
    );
  });

  it('names the file and the field of every problem', () => {
    expect(loadError({ tools: [weather, { ...weather, timeoutMs: 'soon' }] })).toBe('tools/weather.json: "tools[1].timeoutMs": Invalid input: expected number, received string');
    expect(loadError([{ ...weather, url: undefined }])).toBe('tools/weather.json: "[0].url" is required');
    expect(loadError({ ...weather, url: 'ftp://example.com' })).toBe('tools/weather.json: "url": must be an http:// or https:// URL');
    expect(loadError({ ...weather, name: 'get weather' })).toBe('tools/weather.json: "name": must be 1 to 64 letters, digits, "_" or "-"');
    expect(loadError({ ...weather, timeout: 5 })).toBe('tools/weather.json: "timeout" is not a known field');
    expect(loadError({ ...weather, method: 'FETCH' })).toMatch(/^tools\/weather\.json: "method": /);
    expect(loadError({ ...weather, fields: [{ name: 'city', type: 'text' }] })).toMatch(/^tools\/weather\.json: "fields\[0\]\.type": /);
    expect(loadError({ ...weather, inputSchema: { type: 'object' } })).toBe('tools/weather.json: "fields": give either "inputSchema" or "fields", not both');
    expect(loadError({ ...weather, inputSchema: { type: 'string' }, fields: undefined })).toBe('tools/weather.json: "inputSchema": must describe an object ("type": "object")');
  });

  it('refuses a client tool with a url, an unknown kind, a non-object entry and bad JSON', () => {
    expect(loadError({ kind: 'client', name: 'x', description: 'x', url: 'http://a' })).toBe('tools/weather.json: "url": a client tool has no url, a subscribed client runs it');
    expect(loadError({ ...weather, kind: 'builtin' })).toMatch(/^tools\/weather\.json: "kind" must be "http" or "client"/);
    expect(loadError([weather, 'weather'])).toBe('tools/weather.json: "[1]" must be a tool object');
    expect(loadError('{"name": ')).toMatch(/^tools\/weather\.json: not valid JSON: /);
    expect(loadError('42')).toBe('tools/weather.json: expected a tool object, an array of tools, or {"tools": [...]}');
  });
});
