import { splitArguments } from './split-arguments';

/** A call as answered: `arguments` is the exact text sent. */
export interface PlannedCall {
  id: string;
  name: string;
  arguments: string;
}

/** One entry of a chunk's `delta.tool_calls`, in OpenAI's wire format. */
export interface ToolCallFragment {
  index: number;
  id?: string;
  type?: 'function';
  function: { name?: string; arguments: string };
}

export interface FragmentOptions {
  /** Characters of arguments per fragment. Default 7. */
  argumentChunkChars?: number;
  /** Explicit offsets into the arguments text; win over `argumentChunkChars`. */
  splitArgumentsAt?: readonly number[];
  /** Alternate the fragments of parallel calls round-robin. Default false. */
  interleave?: boolean;
  /**
   * `openai` (default): the first fragment has the name and empty arguments; `vllm`: it carries
   * the first piece of arguments too; `split-name`: the name is split over two fragments and
   * the id comes with the second.
   */
  fragmentStyle?: 'openai' | 'vllm' | 'split-name';
  /** Leave every fragment without an id. Default false. */
  omitIds?: boolean;
}

/**
 * The fragments a provider streams for parallel calls. Providers differ in where names, ids
 * and the first arguments appear and in how calls interleave; a client must cope with all.
 */
export function fragmentToolCalls(calls: readonly PlannedCall[], options: FragmentOptions = {}): ToolCallFragment[] {
  const perCall = calls.map((call, index) => fragmentsOf(call, index, options));
  if (!options.interleave) return perCall.flat();
  const longest = Math.max(0, ...perCall.map((fragments) => fragments.length));
  return Array.from({ length: longest }, (_, round) => perCall.flatMap((fragments) => fragments.slice(round, round + 1))).flat();
}

function fragmentsOf(call: PlannedCall, index: number, options: FragmentOptions): ToolCallFragment[] {
  const pieces = splitArguments(call.arguments, { every: options.argumentChunkChars ?? 7, at: options.splitArgumentsAt });
  const carriesFirstPiece = options.fragmentStyle === 'vllm';
  const first: ToolCallFragment = {
    index,
    ...(options.omitIds ? {} : { id: call.id }),
    type: 'function',
    function: { name: call.name, arguments: carriesFirstPiece ? (pieces[0] ?? '') : '' },
  };
  const rest = (carriesFirstPiece ? pieces.slice(1) : pieces).map((piece) => ({ index, function: { arguments: piece } }));
  if (options.fragmentStyle === 'split-name') {
    const half = Math.ceil(call.name.length / 2);
    return [
      { index, type: 'function', function: { name: call.name.slice(0, half), arguments: '' } },
      { index, ...(options.omitIds ? {} : { id: call.id }), function: { name: call.name.slice(half), arguments: '' } },
      ...rest,
    ];
  }
  return [first, ...rest];
}
