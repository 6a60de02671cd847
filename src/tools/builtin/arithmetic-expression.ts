/*
 * A safe arithmetic evaluator: a tokenizer and a recursive-descent parser that computes as it
 * parses. The input comes from a model, so nothing here reaches `eval`, `Function` or any
 * property lookup on a real object: names are looked up in null-prototype tables, and anything
 * that is not arithmetic is a syntax error.
 *
 * Grammar (lowest precedence first):
 *   expression := term (("+" | "-") term)*
 *   term       := unary (("*" | "/" | "%") unary)*
 *   unary      := ("-" | "+") unary | power
 *   power      := primary (("^" | "**") unary)?        right-associative; -2^2 = -4
 *   primary    := number | constant | function "(" expression ("," expression)* ")" | "(" expression ")"
 */

import { SwitchyardError } from '../../errors/switchyard-error';

export const MAX_EXPRESSION_LENGTH = 500;
/** Bounds the recursion, whatever the input; 500 characters could otherwise nest 250 deep. */
const MAX_NESTING = 64;

export type ExpressionResult = { ok: true; value: number } | { ok: false; code: 'invalid_expression' | 'division_by_zero' | 'math_error'; message: string };

const CONSTANTS: Record<string, number> = Object.assign(Object.create(null) as Record<string, number>, { pi: Math.PI, e: Math.E });

interface MathFunction {
  arity: [min: number, max: number];
  apply(args: number[]): number;
}

const FUNCTIONS: Record<string, MathFunction> = Object.assign(Object.create(null) as Record<string, MathFunction>, {
  sqrt: { arity: [1, 1], apply: ([x]: number[]) => checkedSqrt(x!) },
  abs: { arity: [1, 1], apply: ([x]: number[]) => Math.abs(x!) },
  // round(x) to an integer, round(x, digits) to that many decimals.
  round: { arity: [1, 2], apply: ([x, digits = 0]: number[]) => roundTo(x!, digits) },
  min: { arity: [1, Infinity], apply: (args: number[]) => Math.min(...args) },
  max: { arity: [1, Infinity], apply: (args: number[]) => Math.max(...args) },
});

class ExpressionError extends SwitchyardError<'invalid_expression' | 'division_by_zero' | 'math_error'> {
  constructor(
    readonly code: 'invalid_expression' | 'division_by_zero' | 'math_error',
    message: string,
  ) {
    super(message);
  }
}

type Token = { kind: 'number'; value: number; position: number } | { kind: 'name'; value: string; position: number } | { kind: 'operator'; value: string; position: number };

const NUMBER = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;
const OPERATOR = /^(?:\*\*|[-+*/%^(),])/;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let position = 0;
  while (position < text.length) {
    const rest = text.slice(position);
    const space = /^\s+/.exec(rest);
    if (space) {
      position += space[0].length;
      continue;
    }
    const number = NUMBER.exec(rest);
    const name = number ? null : NAME.exec(rest);
    const operator = number || name ? null : OPERATOR.exec(rest);
    if (number) tokens.push({ kind: 'number', value: Number(number[0]), position });
    else if (name) tokens.push({ kind: 'name', value: name[0], position });
    else if (operator) tokens.push({ kind: 'operator', value: operator[0] === '**' ? '^' : operator[0], position });
    else throw new ExpressionError('invalid_expression', `unexpected character "${rest[0]}" at position ${position + 1}`);
    position += (number ?? name ?? operator)![0].length;
  }
  return tokens;
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): number {
    if (this.tokens.length === 0) throw new ExpressionError('invalid_expression', 'the expression is empty');
    const value = this.expression();
    const extra = this.tokens[this.index];
    if (extra) throw new ExpressionError('invalid_expression', `unexpected "${extra.value}" at position ${extra.position + 1}`);
    return value;
  }

  private expression(): number {
    this.depth += 1;
    if (this.depth > MAX_NESTING) throw new ExpressionError('invalid_expression', `the expression nests deeper than ${MAX_NESTING} levels`);
    let value = this.term();
    for (let operator = this.operator('+', '-'); operator; operator = this.operator('+', '-')) {
      const right = this.term();
      value = operator === '+' ? value + right : value - right;
    }
    this.depth -= 1;
    return value;
  }

  private term(): number {
    let value = this.unary();
    for (let operator = this.operator('*', '/', '%'); operator; operator = this.operator('*', '/', '%')) {
      const right = this.unary();
      if (operator === '*') value *= right;
      else if (right === 0) throw new ExpressionError('division_by_zero', operator === '/' ? 'division by zero' : 'modulo by zero');
      else value = operator === '/' ? value / right : value % right;
    }
    return value;
  }

  private unary(): number {
    const sign = this.operator('-', '+');
    if (!sign) return this.power();
    this.depth += 1;
    if (this.depth > MAX_NESTING) throw new ExpressionError('invalid_expression', `the expression nests deeper than ${MAX_NESTING} levels`);
    const value = this.unary();
    this.depth -= 1;
    return sign === '-' ? -value : value;
  }

  private power(): number {
    const base = this.primary();
    if (!this.operator('^')) return base;
    const exponent = this.unary();
    const value = base ** exponent;
    if (Number.isNaN(value)) throw new ExpressionError('math_error', `${base} ^ ${exponent} is not a real number`);
    return value;
  }

  private primary(): number {
    const token = this.tokens[this.index];
    if (!token) throw new ExpressionError('invalid_expression', 'the expression ends too early');
    this.index += 1;
    if (token.kind === 'number') return token.value;
    if (token.kind === 'operator') {
      if (token.value !== '(') throw new ExpressionError('invalid_expression', `unexpected "${token.value}" at position ${token.position + 1}`);
      const value = this.expression();
      this.expect(')');
      return value;
    }
    const name = token.value.toLowerCase();
    const fn = FUNCTIONS[name];
    if (fn) return this.call(name, fn);
    const constant = CONSTANTS[name];
    if (constant !== undefined) return constant;
    throw new ExpressionError('invalid_expression', `unknown name "${token.value}"; known: ${[...Object.keys(CONSTANTS), ...Object.keys(FUNCTIONS)].join(', ')}`);
  }

  private call(name: string, fn: MathFunction): number {
    this.expect('(');
    const args = [this.expression()];
    while (this.operator(',')) args.push(this.expression());
    this.expect(')');
    const [min, max] = fn.arity;
    if (args.length < min || args.length > max) {
      const wanted = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
      throw new ExpressionError('invalid_expression', `${name} takes ${wanted} argument${wanted === '1' ? '' : 's'}, got ${args.length}`);
    }
    return fn.apply(args);
  }

  private operator(...accepted: string[]): string | undefined {
    const token = this.tokens[this.index];
    if (token?.kind === 'operator' && accepted.includes(token.value)) {
      this.index += 1;
      return token.value;
    }
    return undefined;
  }

  private expect(operator: string): void {
    if (this.operator(operator)) return;
    const token = this.tokens[this.index];
    throw new ExpressionError(
      'invalid_expression',
      token ? `expected "${operator}" at position ${token.position + 1}, found "${token.value}"` : `expected "${operator}" at the end`,
    );
  }
}

function checkedSqrt(x: number): number {
  if (x < 0) throw new ExpressionError('math_error', 'sqrt of a negative number');
  return Math.sqrt(x);
}

function roundTo(x: number, digits: number): number {
  if (!Number.isInteger(digits) || digits < 0 || digits > 15) {
    throw new ExpressionError('invalid_expression', 'round takes a whole number of digits from 0 to 15');
  }
  const factor = 10 ** digits;
  return Math.round(x * factor) / factor;
}

/** Evaluates an arithmetic expression; failures are values, never exceptions. */
export function evaluateExpression(text: string): ExpressionResult {
  if (text.length > MAX_EXPRESSION_LENGTH) {
    return { ok: false, code: 'invalid_expression', message: `the expression is longer than ${MAX_EXPRESSION_LENGTH} characters` };
  }
  try {
    const value = new Parser(tokenize(text)).parse();
    if (!Number.isFinite(value)) return { ok: false, code: 'math_error', message: 'the result is too large to represent' };
    return { ok: true, value };
  } catch (error) {
    if (ExpressionError.isInstance(error)) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}
