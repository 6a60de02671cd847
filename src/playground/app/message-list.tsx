import { getToolName, isToolUIPart, type UIMessage } from 'ai';
import { useEffect } from 'react';
import { useStickToBottom } from 'use-stick-to-bottom';
import { EditableText, RegenerateButton, type MessageActions } from './message-actions';
import { ToolCard, type DecideApproval } from './tool-card';
import { TurnMark } from './turn-mark';
import { TurnUsageLine, type LoadUsage } from './turn-usage';
import { visibleParts } from './visible-parts';

/**
 * The messages, kept scrolled to the newest text as it streams unless the person scrolled up
 * (then "Newest" brings them back); a message they send scrolls down again, as chat apps do.
 * With `actions`, each question can be edited and the last answer regenerated: the list is the
 * conversation's path, which those change. With `loadUsage`, each ended turn shows its tokens and cost.
 */
export function MessageList({ messages, onDecide, actions, loadUsage }: { messages: UIMessage[]; onDecide?: DecideApproval; actions?: MessageActions; loadUsage?: LoadUsage }) {
  const { scrollRef, contentRef, isAtBottom, scrollToBottom } = useStickToBottom({ initial: 'instant', resize: 'instant' });
  const lastUserMessageId = messages.findLast((message) => message.role === 'user')?.id;
  useEffect(() => void scrollToBottom('instant'), [lastUserMessageId, scrollToBottom]);

  return (
    <div className="message-pane">
      <div className="messages-scroll" ref={scrollRef} data-testid="messages">
        <ol className="messages" ref={contentRef}>
          {messages.map((message) => (
            <li key={message.id} className={`message ${message.role}`} data-testid={`${message.role}-message`}>
              {visibleParts(message.parts).map((part, index) => {
                if (part.type === 'text') return <p key={index}>{part.text}</p>;
                if (part.type === 'reasoning')
                  return (
                    <p key={index} className="reasoning">
                      {part.text}
                    </p>
                  );
                if (isToolUIPart(part)) return <ToolCard key={part.toolCallId} part={part} name={getToolName(part)} onDecide={onDecide} />;
                if (part.type === 'data-provider-fallback') return <FallbackNote key={index} data={part.data as FallbackData} />;
                if (part.type === 'data-compaction') return <CompactionNote key={index} data={part.data as CompactionData} />;
                return null;
              })}
              <TurnMark message={message} />
              {loadUsage && <TurnUsageLine message={message} loadUsage={loadUsage} />}
              {actions && message.role === 'user' && <EditableText key={message.id} message={message} actions={actions} />}
              {actions && message.role === 'assistant' && message === messages.at(-1) && <RegenerateButton actions={actions} />}
            </li>
          ))}
        </ol>
      </div>
      {!isAtBottom && (
        <button className="to-newest" onClick={() => void scrollToBottom()} data-testid="to-newest">
          ↓ Newest
        </button>
      )}
    </div>
  );
}

interface FallbackData {
  step: number;
  from: { provider: string; model: string };
  to: { provider: string; model: string };
  reason: string;
}

interface CompactionData {
  compactionId: string;
  tokensBefore: number;
  tokensAfter: number;
}

/** The conversation's earlier messages were summarised before a step (`compaction-finish`): how much that saved. */
function CompactionNote({ data }: { data: CompactionData }) {
  return (
    <p className="fallback" data-testid="compaction">
      earlier messages summarised: {data.tokensBefore} → {data.tokensAfter} tokens
    </p>
  );
}

/** A step that went on to its model's next target (`provider-fallback`): where from, where to, and why. */
function FallbackNote({ data }: { data: FallbackData }) {
  return (
    <p className="fallback" data-testid="provider-fallback">
      step {data.step}: {data.from.provider}/{data.from.model} → {data.to.provider}/{data.to.model} ({data.reason.replace(/_/g, ' ')})
    </p>
  );
}
