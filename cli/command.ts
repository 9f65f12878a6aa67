import type { CommandSpec, Values } from './args.ts';

// What a CLI command is: its options, the API call it makes and the lines
// it prints (the tables in commands.ts and policy-commands.ts).

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
}

export interface Command extends CommandSpec {
  request(values: Values): ApiRequest;
  /** Lines printed without --json. */
  describe(response: Record<string, any>, values: Values): string[];
  /** Side effect after a successful call (with or without --json), e.g. writing the key file. */
  after?(response: Record<string, any>, values: Values): void;
}
