import type { UIMessage } from 'ai';

/**
 * The parts to show: a `data-attempt-discarded` part (a step restarted after its worker died
 * or its stream broke) takes back the parts since that step's last `step-start`. Pure.
 */
export function visibleParts(parts: UIMessage['parts']): UIMessage['parts'] {
  const shown: UIMessage['parts'] = [];
  for (const part of parts) {
    if (part.type !== 'data-attempt-discarded') {
      shown.push(part);
      continue;
    }
    const stepStart = shown.findLastIndex((each) => each.type === 'step-start');
    if (stepStart !== -1) shown.length = stepStart;
  }
  return shown;
}
