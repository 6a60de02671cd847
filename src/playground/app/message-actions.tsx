import type { UIMessage } from 'ai';
import { useState, type FormEvent } from 'react';

/** What a person can do to the path from a message: edit a question, or have the last answer written again. */
export interface MessageActions {
  /** Off while a turn runs: the server takes one turn at a time per conversation. */
  disabled: boolean;
  /** `sendMessage` with the message's id: Switchyard replaces it and what followed it. */
  onEdit(messageId: string, text: string): void;
  /** `regenerate()`: a new turn answers the last question again. */
  onRegenerate(): void;
}

/** A user message's Edit button, which turns into a form holding its text. */
export function EditableText({ message, actions }: { message: UIMessage; actions: MessageActions }) {
  const [editing, setEditing] = useState(false);
  const text = message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
  if (!editing) {
    return (
      <button type="button" className="message-action" disabled={actions.disabled} onClick={() => setEditing(true)} data-testid="edit-button">
        Edit
      </button>
    );
  }
  const save = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const changed = (event.currentTarget.elements.namedItem('edited') as HTMLTextAreaElement).value;
    if (!changed.trim()) return;
    setEditing(false);
    actions.onEdit(message.id, changed);
  };
  return (
    <form className="edit-form" onSubmit={save}>
      <textarea name="edited" defaultValue={text} rows={3} data-testid="edit-input" />
      <button type="submit" disabled={actions.disabled} data-testid="edit-save">
        Save and send
      </button>
      <button type="button" onClick={() => setEditing(false)}>
        Cancel
      </button>
    </form>
  );
}

/** The last answer's Regenerate button. */
export function RegenerateButton({ actions }: { actions: MessageActions }) {
  return (
    <button type="button" className="message-action" disabled={actions.disabled} onClick={actions.onRegenerate} data-testid="regenerate-button">
      Regenerate
    </button>
  );
}
