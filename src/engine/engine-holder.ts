import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';

/**
 * Holds the engine instance that serves requests. Key rotation builds a new
 * Provider and swaps it in here: requests already inside the old instance
 * finish there, new ones go to the new one.
 */
export class EngineHolder {
  #provider!: Provider;
  #handle!: (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

  constructor(provider: Provider) {
    this.swap(provider);
  }

  get provider(): Provider {
    return this.#provider;
  }

  swap(provider: Provider): void {
    this.#provider = provider;
    this.#handle = provider.callback();
  }

  handle(req: IncomingMessage, res: ServerResponse): Promise<void> | void {
    return this.#handle(req, res);
  }
}
