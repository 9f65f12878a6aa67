export { interactionRoutes as interactionRouter, type InteractionDeps } from './router.ts';
