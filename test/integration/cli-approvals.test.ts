import { runToExit } from '../support/processes';
import { startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';
import { isEvent, type TestWsClient } from '../support/ws-client';

/** `npm run cli -- approvals list` and `approve`, as a child process against a running stack. */
describe('the CLI and tool approvals', () => {
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    harness = await startToolTurnHarness({ env: { APPROVAL_REQUIRED_TOOLS: 'random_number' } });
  });
  afterAll(() => harness.close());

  const cli = (args: string[]) => runToExit('workers/cli.ts', harness.stack.childEnv({ LOG_LEVEL: 'silent' }), [...args, '--url', harness.stack.url, '--key', harness.apiKey]);

  /** A turn parked on one approval of random_number, in a conversation of its own. */
  async function parkedTurn(): Promise<{ turnId: string; toolCallId: string; client: TestWsClient }> {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId } = await harness.postTurn(conversationId, { steps: [{ toolCalls: [{ name: 'random_number', arguments: { min: 1, max: 6 } }] }, { text: 'Rolled.' }] });
    const request = (await client.waitFor(isEvent('tool-approval-request', turnId))).event;
    await client.waitFor(isEvent('turn-waiting', turnId));
    return { turnId, toolCallId: request.toolCallId, client };
  }

  it('lists the pending approvals across conversations, approves one, denies the other with a reason, and refuses to reverse a decision', async () => {
    const approved = await parkedTurn();
    const denied = await parkedTurn();

    const listed = await cli(['approvals', 'list']);
    expect([listed.code, listed.stderr]).toEqual([0, '2 pending\n']);
    const lines = listed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    // Newest first.
    expect(lines).toEqual([
      expect.objectContaining({
        turnId: denied.turnId,
        toolCallId: denied.toolCallId,
        toolName: 'random_number',
        args: expect.objectContaining({ min: 1, max: 6 }),
        approvalId: expect.any(String),
      }),
      expect.objectContaining({ turnId: approved.turnId, toolCallId: approved.toolCallId }),
    ]);

    const yes = await cli(['approve', approved.turnId, approved.toolCallId]);
    expect([yes.code, yes.stderr]).toEqual([0, '']);
    expect(JSON.parse(yes.stdout)).toMatchObject({ toolCallId: approved.toolCallId, approved: true, decidedAt: expect.any(String) });
    const approvedEvents = await approved.client.waitForTurnEnd(approved.turnId);
    expect(approvedEvents.find((event) => event.type === 'tool-result')).toMatchObject({ result: expect.anything() });
    expect(approvedEvents.find((event) => event.type === 'tool-result').error).toBeUndefined();

    const no = await cli(['approve', denied.turnId, denied.toolCallId, '--deny', '--reason', 'not today']);
    expect(no.code).toBe(0);
    expect(JSON.parse(no.stdout)).toMatchObject({ toolCallId: denied.toolCallId, approved: false, reason: 'not today' });
    const deniedEvents = await denied.client.waitForTurnEnd(denied.turnId);
    expect(deniedEvents.find((event) => event.type === 'tool-result')).toMatchObject({ error: { code: 'denied', message: 'not today' } });

    const reversed = await cli(['approve', denied.turnId, denied.toolCallId]);
    expect(reversed.code).toBe(1);
    expect(reversed.stderr).toMatch(/already/);
    expect(await cli(['approvals', 'list'])).toMatchObject({ code: 0, stdout: '', stderr: '0 pending\n' });
  }, 60_000);

  it('refuses arguments that are not a JSON object and an approve without its ids, naming what is expected', async () => {
    const badArgs = await cli(['approve', 'turn_x', 'call_x', '--args', '[1]']);
    expect([badArgs.code, badArgs.stderr]).toEqual([1, expect.stringMatching(/^--args must be a JSON object/)]);
    const missing = await cli(['approve', 'turn_x']);
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringMatching(/^usage: npm run cli -- approve <turnId> <toolCallId>/)]);
    const unknown = await cli(['approve', 'turn_nobody', 'call_x']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^switchyard cli: no such/);
  }, 60_000);
});
