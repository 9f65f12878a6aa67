#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { helpText, parse, usageLine, UsageError, type Values } from './args.ts';
import { COMMANDS } from './commands.ts';
import { CliError } from './cli-error.ts';
import { str } from './option-values.ts';
import { ApiError, callApi, isObject, NetworkError } from './http.ts';
import { errorLines, json, processIo, type Io } from './output.ts';

// `portcullis <command> [options]`: manages a running server over its REST
// API with a personal access token. Exit codes: 0 done, 1 the call failed
// (API error, server unreachable, file unreadable), 2 wrong command line.

const DEFAULT_URL = 'http://localhost:8080';
const DEFAULT_PAT_FILE = './data/admin.pat';

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function baseUrl(values: Values, env: NodeJS.ProcessEnv): string {
  const url = str(values, 'url') ?? nonEmpty(env.PORTCULLIS_URL) ?? DEFAULT_URL;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url is not a URL: '${url}'`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--url must be an http or https URL: '${url}'`);
  return url.replace(/\/+$/, '');
}

/** The PAT from --pat, --pat-file, PORTCULLIS_PAT, PORTCULLIS_PAT_FILE or ./data/admin.pat, in that order. */
function personalAccessToken(values: Values, env: NodeJS.ProcessEnv): string {
  const flag = str(values, 'pat');
  const file = str(values, 'pat-file');
  if (flag !== undefined && file !== undefined) throw new UsageError('give --pat or --pat-file, not both');
  let token = flag;
  if (token === undefined && file === undefined) token = nonEmpty(env.PORTCULLIS_PAT);
  if (token === undefined) {
    const path = file ?? nonEmpty(env.PORTCULLIS_PAT_FILE) ?? DEFAULT_PAT_FILE;
    try {
      token = readFileSync(path, 'utf8');
    } catch (err) {
      throw new CliError(
        `cannot read the PAT file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (give --pat-file or set PORTCULLIS_PAT_FILE)`,
      );
    }
  }
  token = token.trim();
  if (!token) throw new CliError('the personal access token is empty');
  return token;
}

/** Runs one command line; resolves with the exit code. Never throws for expected errors. */
export async function run(argv: string[], env: NodeJS.ProcessEnv = process.env, io: Io = processIo): Promise<number> {
  let commandName: string | undefined;
  let jsonMode = false;
  try {
    const { command: name, values } = parse(argv, COMMANDS);
    commandName = name;
    jsonMode = values.json === true;
    const command = COMMANDS.find((c) => c.name === name);
    if (values.help === true) {
      io.out(helpText(COMMANDS, command));
      return 0;
    }
    const url = baseUrl(values, env);
    const request = command!.request(values);
    const pat = personalAccessToken(values, env);
    const response = await callApi({ url, pat, org: str(values, 'org') }, request.method, request.path, request.body);
    const body = isObject(response) ? response : {};
    command!.after?.(body, values);
    io.out(jsonMode ? json(response) : command!.describe(body, values).join('\n'));
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      const command = COMMANDS.find((c) => c.name === (err.command ?? commandName));
      io.err(`error: ${err.message}\n${usageLine(command)}`);
      return 2;
    }
    if (err instanceof ApiError) {
      if (jsonMode && err.body !== undefined) io.out(json(err.body));
      io.err(errorLines(err).join('\n'));
      return 1;
    }
    if (err instanceof CliError) {
      if (err.output.length) io.out(err.output.join('\n'));
      io.err(`error: ${err.message}`);
      return 1;
    }
    if (err instanceof NetworkError) {
      io.err(`error: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

if (import.meta.main) process.exitCode = await run(process.argv.slice(2));
