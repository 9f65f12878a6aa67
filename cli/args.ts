import { parseArgs } from 'node:util';

// Argument parsing: global options, one command, its options (strict), and
// the usage texts.

export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  /** Placeholder shown in usage, e.g. "<name>"; booleans have none. */
  arg?: string;
  description: string;
}

export type Options = Record<string, OptionSpec>;
export type Values = Record<string, string | boolean | Array<string | boolean> | undefined>;

/** A mistake in the command line: exit code 2 with a usage line. */
export class UsageError extends Error {
  readonly command?: string;
  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

export const GLOBAL_OPTIONS: Options = {
  url: { type: 'string', arg: '<url>', description: 'server base URL (env PORTCULLIS_URL, default http://localhost:8080)' },
  'pat-file': { type: 'string', arg: '<file>', description: 'file holding the personal access token (env PORTCULLIS_PAT_FILE, default ./data/admin.pat)' },
  pat: { type: 'string', arg: '<token>', description: 'the personal access token itself (env PORTCULLIS_PAT); prefer --pat-file' },
  org: { type: 'string', arg: '<orgId>', description: "org to act on (header x-service-orgid); default: the token owner's org" },
  json: { type: 'boolean', description: 'print the raw JSON response' },
  help: { type: 'boolean', short: 'h', description: 'show help' },
};

export interface CommandSpec {
  name: string;
  summary: string;
  options: Options;
  /** Options that must be given. */
  required: string[];
}

export interface Parsed {
  command?: string;
  values: Values;
}

type ParseConfig = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;

function toConfig(options: Options): ParseConfig {
  const config: ParseConfig = {};
  for (const [name, { type, multiple, short }] of Object.entries(options))
    config[name] = { type, ...(multiple ? { multiple } : {}), ...(short ? { short } : {}) };
  return config;
}

/**
 * `--name value` of a string option as `--name=value`: the next word is
 * the value whatever it starts with, as getopt reads it. Node's parseArgs
 * would refuse a value starting with a dash, and a token or secret does
 * (base64url has `-`).
 */
function joinValues(argv: string[], options: Options): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : undefined;
    if (name !== undefined && options[name]?.type === 'string' && i + 1 < argv.length) {
      joined.push(`${arg}=${argv[i + 1]}`);
      i += 1;
    } else joined.push(arg);
  }
  return joined;
}

/**
 * Global options may stand before or after the command. A lenient first pass
 * over every known option finds the command; the strict second pass allows
 * only the global options and that command's.
 */
export function parse(argv: string[], commands: CommandSpec[]): Parsed {
  const every: Options = { ...GLOBAL_OPTIONS };
  for (const command of commands) Object.assign(every, command.options);
  const first = parseArgs({ args: joinValues(argv, every), options: toConfig(every), strict: false, allowPositionals: true });
  const name = first.positionals[0];
  if (name === undefined) {
    if (first.values.help === true) return { values: { help: true } };
    throw new UsageError('missing command');
  }
  const command = commands.find((c) => c.name === name);
  if (!command) throw new UsageError(`unknown command '${name}'`);
  let second: ReturnType<typeof parseArgs>;
  try {
    const allowed = { ...GLOBAL_OPTIONS, ...command.options };
    second = parseArgs({ args: joinValues(argv, allowed), options: toConfig(allowed), strict: true, allowPositionals: true });
  } catch (err) {
    throw new UsageError(cleanParseError(err), name);
  }
  if (second.positionals.length > 1) throw new UsageError(`unexpected argument '${second.positionals[1]}'`, name);
  const values = second.values as Values;
  if (values.help !== true) {
    const missing = command.required.filter((option) => values[option] === undefined);
    if (missing.length) throw new UsageError(`missing required option ${missing.map((o) => `--${o}`).join(', ')}`, name);
  }
  return { command: name, values };
}

/** parseArgs messages carry a hint meant for programmers; keep the first sentence. */
function cleanParseError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message
    .split('. ')[0]!
    .replace(/\.$/, '')
    .replace(/^Unknown option/, 'unknown option')
    .replace(/^Option/, 'option');
}

function optionUsage(name: string, spec: OptionSpec, required: boolean): string {
  const text = `--${name}${spec.arg ? ` ${spec.arg}` : ''}${spec.multiple ? ' ...' : ''}`;
  return required ? text : `[${text}]`;
}

/** One line: `usage: portcullis add-project --name <name> [options]`. */
export function usageLine(command?: CommandSpec): string {
  if (!command) return 'usage: portcullis <command> [options]   (portcullis --help lists the commands)';
  const options = Object.entries(command.options).map(([name, spec]) => optionUsage(name, spec, command.required.includes(name)));
  return `usage: portcullis ${command.name} ${options.join(' ')}`.trimEnd();
}

function optionLines(options: Options): string[] {
  const labels = Object.entries(options).map(
    ([name, spec]) => [`  ${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.arg ? ` ${spec.arg}` : ''}`, spec.description] as const,
  );
  const width = Math.max(...labels.map(([label]) => label.length)) + 2;
  return labels.map(([label, description]) => label.padEnd(width) + description);
}

export function helpText(commands: CommandSpec[], command?: CommandSpec): string {
  if (command) {
    return [
      `${usageLine(command)}`,
      '',
      command.summary,
      '',
      'Options:',
      ...optionLines(command.options),
      '',
      'Global options:',
      ...optionLines(GLOBAL_OPTIONS),
      '',
    ].join('\n');
  }
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  return [
    usageLine(),
    '',
    'Manages a running Portcullis server through its REST API.',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    '',
    'Global options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Run `portcullis <command> --help` for the options of a command.',
    '',
  ].join('\n');
}
