import { evaluateExpression, MAX_EXPRESSION_LENGTH } from '../../../src/tools/builtin/arithmetic-expression';

const value = (text: string) => {
  const result = evaluateExpression(text);
  if (!result.ok) throw new Error(`${text}: ${result.message}`);
  return result.value;
};
const failure = (text: string) => {
  const result = evaluateExpression(text);
  if (result.ok) throw new Error(`${text} evaluated to ${result.value}`);
  return result;
};

describe('evaluateExpression', () => {
  it('follows precedence: * / % before + -, ^ before unary minus, ^ right-associative', () => {
    expect(value('2 + 3 * 4')).toBe(14);
    expect(value('10 - 4 - 3')).toBe(3);
    expect(value('20 / 4 / 5')).toBe(1);
    expect(value('7 % 4 + 1')).toBe(4);
    expect(value('2 ^ 3 ^ 2')).toBe(512);
    expect(value('2 ** 10')).toBe(1024);
    expect(value('-2 ^ 2')).toBe(-4);
    expect(value('2 ^ -1')).toBe(0.5);
  });

  it('evaluates parentheses, unary minus and decimals', () => {
    expect(value('(2 + 3) * 4')).toBe(20);
    expect(value('-(3 - 5)')).toBe(2);
    expect(value('--4')).toBe(4);
    expect(value('3 * -2')).toBe(-6);
    expect(value('.5 + 1.25')).toBe(1.75);
    expect(value('1.5e3')).toBe(1500);
    expect(value(' ( ( 1 ) ) ')).toBe(1);
  });

  it('knows sqrt, abs, round, min, max, pi and e', () => {
    expect(value('sqrt(16) + abs(-3)')).toBe(7);
    expect(value('round(2.5)')).toBe(3);
    expect(value('round(3.14159, 2)')).toBe(3.14);
    expect(value('min(4, 2, 8) * max(1, 9)')).toBe(18);
    expect(value('pi')).toBe(Math.PI);
    expect(value('2 * E')).toBe(2 * Math.E);
    expect(value('max(1, sqrt(min(81, 100)))')).toBe(9);
  });

  it('reports division and modulo by zero', () => {
    expect(failure('1 / 0')).toMatchObject({ code: 'division_by_zero', message: 'division by zero' });
    expect(failure('5 % (2 - 2)')).toMatchObject({ code: 'division_by_zero', message: 'modulo by zero' });
  });

  it('reports bad syntax with its position', () => {
    expect(failure('2 +')).toMatchObject({ code: 'invalid_expression', message: 'the expression ends too early' });
    expect(failure('(1 + 2')).toMatchObject({ code: 'invalid_expression', message: 'expected ")" at the end' });
    expect(failure('1 2')).toMatchObject({ message: 'unexpected "2" at position 3' });
    expect(failure('')).toMatchObject({ message: 'the expression is empty' });
    expect(failure('sqrt(1, 2)')).toMatchObject({ message: 'sqrt takes 1 argument, got 2' });
    expect(failure('sqrt 4')).toMatchObject({ code: 'invalid_expression' });
  });

  it('reports results that are not real or too large', () => {
    expect(failure('sqrt(-1)')).toMatchObject({ code: 'math_error' });
    expect(failure('(-8) ^ 0.5')).toMatchObject({ code: 'math_error' });
    expect(failure('10 ^ 400')).toMatchObject({ code: 'math_error', message: 'the result is too large to represent' });
  });

  it('rejects anything that is not arithmetic', () => {
    for (const text of ['constructor', 'process.exit(1)', 'this', 'globalThis', '__proto__', 'toString()', 'require("fs")', 'a = 1', '1; 2', '`x`', '[1]', 'Math.PI']) {
      const result = failure(text);
      expect(result.code).toBe('invalid_expression');
    }
    expect(failure('constructor').message).toMatch(/^unknown name "constructor"/);
    expect(failure('process').message).toMatch(/^unknown name "process"/);
    expect(failure('process.exit(1)').message).toBe('unexpected character "." at position 8');
  });

  it('bounds the length and the nesting', () => {
    expect(failure('1+'.repeat(MAX_EXPRESSION_LENGTH)).message).toBe(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
    expect(failure(`${'('.repeat(100)}1${')'.repeat(100)}`).message).toMatch(/nests deeper than/);
    expect(failure('-'.repeat(200) + '1').message).toMatch(/nests deeper than/);
  });
});
