import { splitFunctionTools, type UsableTools } from '../../../src/openai/function-tools';

const usable: UsableTools = new Map([
  ['calculator', { kind: 'builtin' }],
  ['weather', { kind: 'http' }],
  ['confirm', { kind: 'client' }],
  ['transfer', { kind: 'http', needsApproval: true }],
]);
const schema = { type: 'object', properties: { expression: { type: 'number' } }, required: ['expression'] };

describe("an OpenAI request's functions: Switchyard's tools or the caller's", () => {
  it('runs a function named after a builtin or http tool here when it declares no parameters, absent or null', () => {
    expect(splitFunctionTools([{ name: 'calculator' }, { name: 'weather', parameters: null, description: null }], usable)).toEqual({
      ok: true,
      serverTools: ['calculator', 'weather'],
      functions: [],
    });
  });

  it('leaves a function that declares parameters to the caller, with its schema, whatever its name', () => {
    expect(
      splitFunctionTools(
        [
          { name: 'calculator', description: 'Mine', parameters: schema },
          { name: 'confirm', parameters: {} },
        ],
        usable,
      ),
    ).toEqual({
      ok: true,
      serverTools: [],
      functions: [
        { name: 'calculator', description: 'Mine', inputSchema: schema },
        { name: 'confirm', description: '', inputSchema: {} },
      ],
    });
  });

  it('leaves a function of any other name to the caller, taking no arguments when it declares none', () => {
    expect(splitFunctionTools([{ name: 'lookup' }, { name: 'forbidden_here', parameters: null }], usable)).toEqual({
      ok: true,
      serverTools: [],
      functions: [
        { name: 'lookup', description: '', inputSchema: { type: 'object', properties: {} } },
        { name: 'forbidden_here', description: '', inputSchema: { type: 'object', properties: {} } },
      ],
    });
  });

  it('refuses a client tool or one needing approval named without parameters: neither could end here', () => {
    expect(splitFunctionTools([{ name: 'calculator' }, { name: 'confirm' }], usable)).toEqual({
      ok: false,
      code: 'unsupported_parameter',
      message: expect.stringMatching(/^"confirm" .*client tool/),
    });
    expect(splitFunctionTools([{ name: 'transfer', parameters: null }], usable)).toEqual({
      ok: false,
      code: 'unsupported_parameter',
      message: expect.stringMatching(/^"transfer" .*approval/),
    });
  });

  it('refuses two functions of one name', () => {
    expect(splitFunctionTools([{ name: 'calculator' }, { name: 'calculator', parameters: schema }], usable)).toEqual({
      ok: false,
      code: 'invalid_request',
      message: expect.stringContaining('"calculator" is declared twice'),
    });
  });
});
