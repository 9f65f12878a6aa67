export { interactionRoutes as interactionRouter, externalCallbackRoutes, type InteractionDeps } from './router.ts';
