import type { Context } from 'koa';
import type { Logger } from '../src/logger.ts';

/** How sign-in attempts end: logged, and told to /metrics. */
export interface LoginEvents {
  succeeded(ctx: Context, accountId: string): void;
  failed(ctx: Context, event: 'login_failed' | 'second_factor_failed', locked: boolean): void;
}

export function loginEvents(log: Logger, onLogin?: (result: 'success' | 'failure') => void): LoginEvents {
  return {
    succeeded(ctx, accountId) {
      log.info({ requestId: ctx.state.requestId, event: 'login_succeeded', accountId }, 'login succeeded');
      onLogin?.('success');
    },
    failed(ctx, event, locked) {
      log.info({ requestId: ctx.state.requestId, event, locked }, event === 'login_failed' ? 'login failed' : 'second factor failed');
      onLogin?.('failure');
    },
  };
}
