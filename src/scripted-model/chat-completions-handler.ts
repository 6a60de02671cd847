import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { text } from 'node:stream/consumers';
import type { ArrivalCounter } from './arrival-counter';
import { chooseStep } from './choose-step';
import { sendCompletion, streamCompletion } from './deliver-completion';
import { SCENARIO_HEADER } from './find-scenario';
import { sendError } from './http-responses';
import { estimatePromptTokens } from './message-text';
import { errorTypeForStatus, invalidRequest } from './openai-error';
import { planReply } from './plan-reply';
import type { Step } from './scenario-schema';
import type { RecordedRequest, RequestLog } from './request-log';
import type { FaultControl } from './fault-control';
import { validateChatRequest } from './validate-chat-request';

export interface ChatCompletionsContext {
  log: RequestLog;
  arrivals: ArrivalCounter;
  /** Pause per token of answers made without a scenario. */
  defaultTokenDelayMs: number;
  /** A fault set on demand, applied whatever the scenario says (fault-control.ts). */
  faults: FaultControl;
}

/** `POST /v1/chat/completions`: parse, record, validate, pick the step, then answer it. */
export async function handleChatCompletions(req: IncomingMessage, res: ServerResponse, context: ChatCompletionsContext): Promise<void> {
  const closed = new AbortController();
  res.once('close', () => closed.abort());

  const raw = await text(req);
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return sendError(res, invalidRequest('We could not parse the JSON body of your request. The API expects a JSON payload.'));
  }
  const recorded: RecordedRequest = { method: req.method ?? 'POST', path: req.url ?? '', headers: req.headers, body, receivedAt: Date.now() };
  context.log.record(recorded);

  const validation = validateChatRequest(body);
  if (!validation.ok) return sendError(res, validation.error);
  const { request } = validation;
  const fault = context.faults.take();
  if (fault?.refuse) {
    const { status, message, type, code, retryAfterSeconds } = fault.refuse;
    return sendError(res, {
      status,
      message: message ?? `The scripted model answers ${status}: a fault is set on it.`,
      type: type ?? errorTypeForStatus(status),
      param: null,
      code: code ?? null,
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    });
  }
  // Nothing is sent until the client gives up (or the server closes).
  if (fault?.hang) return new Promise<void>((resolve) => closed.signal.addEventListener('abort', () => resolve(), { once: true }));

  const header = req.headers[SCENARIO_HEADER];
  const choice = chooseStep({
    request,
    scenarioHeader: Array.isArray(header) ? header[0] : header,
    countArrival: (messages) => context.arrivals.next(messages),
    defaultTokenDelayMs: context.defaultTokenDelayMs,
  });
  if (!choice.ok) return sendError(res, choice.error);
  const step = fault
    ? { ...withoutEnding(choice.step), ...(fault.cutAfterTokens !== undefined ? { cutAfterTokens: fault.cutAfterTokens } : { stallAfterTokens: fault.stallAfterTokens }) }
    : choice.step;
  const reply = planReply(step, request);
  if (reply.kind === 'error') return sendError(res, reply.error);

  const promptTokens = estimatePromptTokens(request.messages);
  const delivery = {
    plan: reply.plan,
    meta: {
      id: `chatcmpl-${randomUUID()}`,
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      includeUsage: request.stream_options?.include_usage === true,
    },
    promptTokens,
    signal: closed.signal,
    bill: (completionTokens: number, reported: boolean) => {
      recorded.billed = { promptTokens, completionTokens, reported };
    },
  };
  await (request.stream ? streamCompletion(res, delivery) : sendCompletion(res, delivery));
}

/** The step without the ending its scenario gave it, for a fault to give it another. */
function withoutEnding(step: Step): Step {
  const { cutAfterTokens: _cut, stallAfterTokens: _stall, errorEventAfterTokens: _error, ...rest } = step;
  return rest;
}
