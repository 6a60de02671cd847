import { getToolName, isToolUIPart, type UIMessage } from 'ai';
import { useEffect } from 'react';
import { useStickToBottom } from 'use-stick-to-bottom';
import { ToolCard, type DecideApproval } from './tool-card';
import { TurnMark } from './turn-mark';
import { visibleParts } from './visible-parts';

/**
 * The messages, kept scrolled to the newest text as it streams unless the person scrolled up
 * (then "Newest" brings them back); a message they send scrolls down again, as chat apps do.
 */
export function MessageList({ messages, onDecide }: { messages: UIMessage[]; onDecide?: DecideApproval }) {
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
                if (part.type === 'reasoning') return <p key={index} className="reasoning">{part.text}</p>;
                if (isToolUIPart(part)) return <ToolCard key={part.toolCallId} part={part} name={getToolName(part)} onDecide={onDecide} />;
                return null;
              })}
              <TurnMark message={message} />
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
