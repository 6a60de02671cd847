import { describeKnownTools, unknownToolNames, unknownToolsMessage } from '../../../src/tools/known-tools';

describe('known tool names', () => {
  const known = { names: ['calculator', 'current_time'], mcpServers: ['files'] };

  it('finds the names that are no tool, in the order given', () => {
    expect(unknownToolNames(['calculater', 'calculator', 'nope'], known)).toEqual(['calculater', 'nope']);
    expect(unknownToolNames([], known)).toEqual([]);
  });

  it("takes a tool of a listed MCP server on trust, but not the server's bare prefix or another server's", () => {
    expect(unknownToolNames(['files__read', 'files__', 'web__fetch'], known)).toEqual(['files__', 'web__fetch']);
  });

  it('names the unknown and the known in one line', () => {
    expect(unknownToolsMessage(['nope'], known)).toBe('unknown tools: nope; the known tools are: calculator, current_time, any tool of the MCP server "files" (files__<tool>)');
    expect(describeKnownTools({ names: [] })).toBe('none');
  });
});
