import { AbstractChat, DefaultChatTransport, type ChatInit, type ChatState, type ChatStatus, type PrepareSendMessagesRequest, type UIMessage } from 'ai';

/**
 * The AI SDK's own chat logic (what `useChat` runs), with the plainest state: an array. Tests
 * drive `/api/chat` with it exactly as a React app would, and wait on its status changes.
 */
export class NodeChat extends AbstractChat<UIMessage> {
  private readonly listeners = new Set<() => void>();

  constructor(
    options: { url: string; token: string; fetch?: typeof fetch; prepareSendMessagesRequest?: PrepareSendMessagesRequest<UIMessage> } & Omit<ChatInit<UIMessage>, 'transport'>,
  ) {
    const { url, token, fetch: fetchImpl, prepareSendMessagesRequest, ...init } = options;
    let notify = () => {};
    const state = arrayState(() => notify(), init.messages ?? []);
    super({
      ...init,
      state,
      transport: new DefaultChatTransport({
        api: `${url}/api/chat`,
        headers: { authorization: `Bearer ${token}` },
        ...(fetchImpl ? { fetch: fetchImpl } : {}),
        ...(prepareSendMessagesRequest ? { prepareSendMessagesRequest } : {}),
      }),
    });
    notify = () => {
      for (const listener of this.listeners) listener();
    };
  }

  /** Resolves once `predicate` holds (checked on every state change); rejects after `timeoutMs`. */
  waitUntil(predicate: (chat: NodeChat) => boolean, timeoutMs = 20_000): Promise<void> {
    if (predicate(this)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`chat did not reach the expected state: status ${this.status}, ${JSON.stringify(this.messages)}`));
      }, timeoutMs);
      const check = () => {
        if (!predicate(this)) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      this.listeners.add(check);
    });
  }

  get assistantMessages(): UIMessage[] {
    return this.messages.filter((message) => message.role === 'assistant');
  }
}

function arrayState(changed: () => void, initial: UIMessage[]): ChatState<UIMessage> {
  let messages: UIMessage[] = [...initial];
  let status: ChatStatus = 'ready';
  let error: Error | undefined;
  return {
    get status() {
      return status;
    },
    set status(value) {
      status = value;
      changed();
    },
    get error() {
      return error;
    },
    set error(value) {
      error = value;
      changed();
    },
    get messages() {
      return messages;
    },
    set messages(value) {
      messages = [...value];
      changed();
    },
    pushMessage(message) {
      messages = [...messages, message];
      changed();
    },
    popMessage() {
      messages = messages.slice(0, -1);
      changed();
    },
    replaceMessage(index, message) {
      messages = messages.map((each, at) => (at === index ? message : each));
      changed();
    },
    snapshot: (thing) => structuredClone(thing),
  };
}

/** The text of a message's text parts, joined. */
export function textOf(message: UIMessage | undefined): string {
  return (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** A message's tool parts (`tool-<name>`), in order. */
export function toolPartsOf(message: UIMessage | undefined): any[] {
  return (message?.parts ?? []).filter((part) => part.type.startsWith('tool-'));
}
