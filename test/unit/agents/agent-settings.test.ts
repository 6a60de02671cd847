import { parseAgentReference } from '../../../src/agents/agent-reference';
import { patchedConfig } from '../../../src/agents/store/agent-config';
import { turnSettings } from '../../../src/turns/agent-settings';

const conversation = { system: null, model: null, tools: null, requireApproval: null, compaction: null, modelSettings: null, responseFormat: null };

describe('agent references', () => {
  it('reads an id or a name, with or without a pinned version', () => {
    expect(parseAgentReference('agent_abc')).toEqual({ key: 'agent_abc', version: null });
    expect(parseAgentReference('support@3')).toEqual({ key: 'support', version: 3 });
    expect(() => parseAgentReference('support@0')).toThrow('not an agent reference');
    expect(() => parseAgentReference('a b')).toThrow('not an agent reference');
  });
});

describe('a patch', () => {
  it('changes what it names, removes what it sets to null, keeps the rest', () => {
    expect(patchedConfig({ name: 'a', instructions: 'x', maxSteps: 3 }, { instructions: 'y', maxSteps: null })).toEqual({ name: 'a', instructions: 'y' });
  });
});

describe("a turn's settings with an agent", () => {
  const agent = { name: 'a', instructions: 'Agent prompt.', model: 'agent-model', tools: ['t'], maxSteps: 4, modelSettings: { temperature: 0.5 } };

  it("take the agent's where the turn and the conversation give none", () => {
    expect(turnSettings({}, conversation, agent)).toEqual({
      conversation: {
        system: 'Agent prompt.',
        model: 'agent-model',
        tools: ['t'],
        requireApproval: null,
        compaction: null,
        modelSettings: { temperature: 0.5 },
        responseFormat: null,
      },
      options: { maxSteps: 4 },
    });
  });

  it("let the turn's own fields win, then the conversation's", () => {
    const settings = turnSettings({ maxSteps: 1, model: 'turn-model' }, { ...conversation, system: 'Conversation prompt.' }, agent);
    expect(settings.options).toEqual({ maxSteps: 1, model: 'turn-model' });
    expect(settings.conversation).toMatchObject({ system: 'Conversation prompt.', modelSettings: { temperature: 0.5 } });
  });

  it('change nothing without an agent', () => {
    expect(turnSettings({ maxSteps: 2 }, conversation, null)).toEqual({ options: { maxSteps: 2 }, conversation });
  });
});
