import { errorMessage } from '../errors/switchyard-error';
import { ToolLoadError } from './tool-errors';

/** A file of the tools directory as JSON; text that is not JSON is a `ToolLoadError` naming the file. */
export function parseJsonFile(source: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ToolLoadError(`${source}: not valid JSON: ${errorMessage(error)}`);
  }
}

/**
 * What each entry of a file declares. `parse` returns it, `undefined` for an entry that declares
 * nothing (a disabled server), or what is wrong with the entry. Every problem of the file is
 * reported in one `ToolLoadError` naming the file, so that one load shows all of them.
 */
export function parseEntries<Entry, Declared>(source: string, entries: Entry[], parse: (entry: Entry) => Declared | undefined | string): Declared[] {
  const problems: string[] = [];
  const declared: Declared[] = [];
  for (const entry of entries) {
    const parsed = parse(entry);
    if (typeof parsed === 'string') problems.push(parsed);
    else if (parsed !== undefined) declared.push(parsed);
  }
  if (problems.length) throw new ToolLoadError(`${source}: ${problems.join('; ')}`);
  return declared;
}
