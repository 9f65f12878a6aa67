import { InvalidFilter, ScimInvalid } from './errors.ts';

// The filter grammar of RFC 7644 3.4.2.2, read by a small recursive-descent
// parser into a tree. Nothing here knows columns or SQL: the storage floor
// compiles the tree (src/storage/scim-filter-sql.ts), PATCH paths evaluate
// it on a resource's values (./evaluate.ts).
//
//   FILTER    = attrExp / logExp / valuePath / *1"not" "(" FILTER ")"
//   valuePath = attrPath "[" valFilter "]"
//   valFilter = attrExp / logExp / *1"not" "(" valFilter ")"
//   attrExp   = (attrPath SP "pr") / (attrPath SP compareOp SP compValue)
//   logExp    = FILTER SP ("and" / "or") SP FILTER
//   compValue = false / null / true / number / string
//   attrPath  = [URI ":"] ATTRNAME *1subAttr
//
// "and" binds tighter than "or"; keywords, operators and attribute names
// are case-insensitive. As in the filters clients send (and as PATCH paths
// write it, RFC 7644 3.5.2), a value path may be followed by a sub-attribute:
// `emails[type eq "work"].value sw "a"` means an email of type work whose
// value starts with "a".

export const COMPARE_OPS = ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'] as const;
export type CompareOp = (typeof COMPARE_OPS)[number];
export type FilterValue = string | number | boolean | null;

export interface AttrPath {
  /** The schema URI the name was qualified with, if any. */
  uri?: string;
  name: string;
  sub?: string;
}

export type Filter =
  | { op: CompareOp; attr: AttrPath; value: FilterValue }
  | { op: 'pr'; attr: AttrPath }
  | { op: 'and' | 'or'; left: Filter; right: Filter }
  | { op: 'not'; filter: Filter }
  /** Some value of the multi-valued `attr` satisfies `filter` (its names are `attr`'s sub-attributes). */
  | { op: 'valuePath'; attr: AttrPath; filter: Filter };

/** Longer filters are refused before they are read. */
const MAX_FILTER_LENGTH = 4096;
/** Parentheses, "not" and value paths nest at most this deep: the parser's recursion stays shallow. */
const MAX_DEPTH = 32;
/** Attribute expressions in one filter: enough for any client, and a bound on the SQL it becomes. */
const MAX_TERMS = 100;

type Token =
  | { kind: 'punct'; text: '(' | ')' | '[' | ']' | '.'; at: number }
  | { kind: 'word'; text: string; at: number }
  | { kind: 'string'; value: string; at: number }
  | { kind: 'number'; value: number; at: number };

const WORD = /[A-Za-z$][A-Za-z0-9:._$-]*/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
// biome-ignore lint/suspicious/noControlCharactersInRegex: a JSON string holds no raw control character (RFC 8259 7)
const STRING = /"(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9A-Fa-f]{4})*"/y;
const ATTRNAME = /^\$?[A-Za-z][A-Za-z0-9_-]*$/;

function match(pattern: RegExp, text: string, at: number): string | undefined {
  pattern.lastIndex = at;
  return pattern.exec(text)?.[0];
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    const c = text[at]!;
    if (c === ' ' || c === '\t') {
      at += 1;
      continue;
    }
    if (c === '(' || c === ')' || c === '[' || c === ']' || c === '.') {
      tokens.push({ kind: 'punct', text: c, at });
      at += 1;
      continue;
    }
    if (c === '"') {
      const raw = match(STRING, text, at);
      if (!raw) throw new InvalidFilter(`unterminated or invalid string at position ${at + 1}`);
      const value = JSON.parse(raw) as string;
      // PostgreSQL cannot hold a NUL, and a lone surrogate is no text.
      if (value.includes('\u0000') || !value.isWellFormed()) throw new InvalidFilter(`the string at position ${at + 1} holds a NUL or invalid Unicode`);
      tokens.push({ kind: 'string', value, at });
      at += raw.length;
      continue;
    }
    const number = match(NUMBER, text, at);
    if (number) {
      tokens.push({ kind: 'number', value: Number(number), at });
      at += number.length;
      continue;
    }
    const word = match(WORD, text, at);
    if (!word) throw new InvalidFilter(`unexpected character at position ${at + 1}`);
    tokens.push({ kind: 'word', text: word, at });
    at += word.length;
  }
  return tokens;
}

/** `urn:…:User:name.givenName` → uri, name, sub; undefined when the word is no attribute path. */
export function attrPathOf(word: string): AttrPath | undefined {
  const colon = word.lastIndexOf(':');
  const uri = colon === -1 ? undefined : word.slice(0, colon);
  const parts = word.slice(colon + 1).split('.');
  if (parts.length > 2 || !parts.every((part) => ATTRNAME.test(part))) return undefined;
  if (uri !== undefined && !/^urn:[A-Za-z0-9][A-Za-z0-9.:_-]*$/i.test(uri)) return undefined;
  return { ...(uri === undefined ? {} : { uri }), name: parts[0]!, ...(parts[1] === undefined ? {} : { sub: parts[1] }) };
}

class Parser {
  private pos = 0;
  private depth = 0;
  private terms = 0;
  private readonly tokens: Token[];
  constructor(tokens: Token[]) {
    this.tokens = tokens;
  }

  parse(): Filter {
    const filter = this.or(false);
    const extra = this.tokens[this.pos];
    if (extra) throw new InvalidFilter(`unexpected ${describe(extra)} at position ${extra.at + 1}`);
    return filter;
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private next(expected: string): Token {
    const token = this.tokens[this.pos];
    if (!token) throw new InvalidFilter(`the filter ends where ${expected} was expected`);
    this.pos += 1;
    return token;
  }

  private keyword(word: string): boolean {
    const token = this.peek();
    return token?.kind === 'word' && token.text.toLowerCase() === word;
  }

  private punct(text: string): boolean {
    const token = this.peek();
    return token?.kind === 'punct' && token.text === text;
  }

  private expectPunct(text: string): void {
    const token = this.next(`"${text}"`);
    if (token.kind !== 'punct' || token.text !== text) throw new InvalidFilter(`expected "${text}" at position ${token.at + 1}, found ${describe(token)}`);
  }

  private deeper<T>(read: () => T): T {
    this.depth += 1;
    if (this.depth > MAX_DEPTH) throw new InvalidFilter(`the filter nests deeper than ${MAX_DEPTH} levels`);
    const result = read();
    this.depth -= 1;
    return result;
  }

  private or(inValuePath: boolean): Filter {
    let left = this.and(inValuePath);
    while (this.keyword('or')) {
      this.pos += 1;
      left = { op: 'or', left, right: this.and(inValuePath) };
    }
    return left;
  }

  private and(inValuePath: boolean): Filter {
    let left = this.unary(inValuePath);
    while (this.keyword('and')) {
      this.pos += 1;
      left = { op: 'and', left, right: this.unary(inValuePath) };
    }
    return left;
  }

  private unary(inValuePath: boolean): Filter {
    if (this.keyword('not')) {
      this.pos += 1;
      return this.deeper(() => ({ op: 'not', filter: this.parenthesised(inValuePath) }));
    }
    if (this.punct('(')) return this.deeper(() => this.parenthesised(inValuePath));
    return this.attributeExpression(inValuePath);
  }

  private parenthesised(inValuePath: boolean): Filter {
    this.expectPunct('(');
    const filter = this.or(inValuePath);
    this.expectPunct(')');
    return filter;
  }

  private attributePath(): AttrPath {
    const token = this.next('an attribute');
    const attr = token.kind === 'word' ? attrPathOf(token.text) : undefined;
    if (!attr) throw new InvalidFilter(`expected an attribute at position ${token.at + 1}, found ${describe(token)}`);
    return attr;
  }

  private attributeExpression(inValuePath: boolean): Filter {
    const attr = this.attributePath();
    if (!this.punct('[')) return this.comparison(attr);
    if (inValuePath) throw new InvalidFilter('a value filter cannot hold another value filter');
    if (attr.sub) throw new InvalidFilter(`a value filter applies to a multi-valued attribute, not to "${attr.name}.${attr.sub}"`);
    this.pos += 1;
    const inner = this.deeper(() => this.or(true));
    this.expectPunct(']');
    if (!this.punct('.')) return { op: 'valuePath', attr, filter: inner };
    this.pos += 1;
    const sub = this.next('a sub-attribute');
    if (sub.kind !== 'word' || !ATTRNAME.test(sub.text)) throw new InvalidFilter(`expected a sub-attribute at position ${sub.at + 1}`);
    return { op: 'valuePath', attr, filter: { op: 'and', left: inner, right: this.comparison({ name: sub.text }) } };
  }

  private comparison(attr: AttrPath): Filter {
    this.terms += 1;
    if (this.terms > MAX_TERMS) throw new InvalidFilter(`the filter holds more than ${MAX_TERMS} attribute expressions`);
    const token = this.next('an operator');
    const op = token.kind === 'word' ? token.text.toLowerCase() : '';
    if (op === 'pr') return { op: 'pr', attr };
    if (!(COMPARE_OPS as readonly string[]).includes(op)) throw new InvalidFilter(`expected an operator at position ${token.at + 1}, found ${describe(token)}`);
    return { op: op as CompareOp, attr, value: this.value() };
  }

  private value(): FilterValue {
    const token = this.next('a value');
    if (token.kind === 'string' || token.kind === 'number') return token.value;
    const word = token.kind === 'word' ? token.text.toLowerCase() : '';
    if (word === 'true') return true;
    if (word === 'false') return false;
    if (word === 'null') return null;
    throw new InvalidFilter(`expected a value (a string, number, true, false or null) at position ${token.at + 1}, found ${describe(token)}`);
  }
}

function describe(token: Token): string {
  if (token.kind === 'punct' || token.kind === 'word') return `"${token.text.slice(0, 40)}"`;
  return token.kind === 'string' ? 'a string' : 'a number';
}

/**
 * Reads a filter into its tree. Any text that is not a filter — however
 * long, deep or strange — is an InvalidFilter, the only error this throws.
 */
export function parseFilter(text: string): Filter {
  if (text.length > MAX_FILTER_LENGTH) throw new InvalidFilter(`the filter is longer than ${MAX_FILTER_LENGTH} characters`);
  if (!text.trim()) throw new InvalidFilter('the filter is empty');
  return new Parser(tokenize(text)).parse();
}

/** A path of a PATCH operation (RFC 7644 3.5.2): `attrPath`, or `valuePath` with an optional sub-attribute. */
export interface PatchPath {
  attr: AttrPath;
  /** Which values of a multi-valued attribute the operation targets. */
  filter?: Filter;
  /** The sub-attribute of the values `filter` selects. */
  sub?: string;
}

export function parsePatchPath(text: string): PatchPath {
  const invalidPath = (message: string) => new ScimInvalid('invalidPath', message);
  if (text.length > MAX_FILTER_LENGTH) throw invalidPath(`the path is longer than ${MAX_FILTER_LENGTH} characters`);
  const bracket = text.indexOf('[');
  const head = bracket === -1 ? text : text.slice(0, bracket);
  const attr = attrPathOf(head);
  if (!attr) throw invalidPath(`"${head.slice(0, 60)}" is not an attribute path`);
  if (bracket === -1) return { attr };
  const close = text.lastIndexOf(']');
  if (close < bracket || attr.sub) throw invalidPath('a value filter is written attribute[filter], on a multi-valued attribute');
  const tail = text.slice(close + 1);
  const sub = tail === '' ? undefined : /^\.(\$?[A-Za-z][A-Za-z0-9_-]*)$/.exec(tail)?.[1];
  if (tail !== '' && !sub) throw invalidPath(`"${tail.slice(0, 60)}" after the value filter is not a sub-attribute`);
  const inner = new Parser(tokenize(text.slice(bracket + 1, close)));
  const filter = inner.parse();
  if (containsValuePath(filter)) throw new InvalidFilter('a value filter cannot hold another value filter');
  return { attr, filter, ...(sub ? { sub } : {}) };
}

function containsValuePath(filter: Filter): boolean {
  switch (filter.op) {
    case 'valuePath':
      return true;
    case 'and':
    case 'or':
      return containsValuePath(filter.left) || containsValuePath(filter.right);
    case 'not':
      return containsValuePath(filter.filter);
    default:
      return false;
  }
}
