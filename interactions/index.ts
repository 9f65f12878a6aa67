export { interactionRoutes as interactionRouter, type InteractionDeps } from './routes.ts';
