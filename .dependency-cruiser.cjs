// The floors of the code (docs/architecture.md), lowest first. A module may
// import from its own floor and the floors below it, never from above, and
// no import cycle is allowed. `npm run lint` checks both.
const FLOORS = [
  { name: 'base', path: '^(config/|src/(domain|security|outbound)/|src/(logger|request-context)\\.ts$)' },
  { name: 'storage', path: '^src/storage/' },
  { name: 'engine records and keys', path: '^(adapters/|src/keys/)' },
  { name: 'pages', path: '^src/pages/' },
  { name: 'engine', path: '^src/engine/' },
  { name: 'queries', path: '^src/queries/' },
  { name: 'commands', path: '^src/commands/' },
  { name: 'edges', path: '^(interactions/|src/admin/|src/scim/|src/saml/)' },
  { name: 'http', path: '^src/http/' },
  { name: 'assembly', path: '^(src/(app|server|main|background-work)\\.ts$|cli/)' },
];

const upward = FLOORS.flatMap((floor, i) => {
  const higher = FLOORS.slice(i + 1).map((f) => f.path);
  if (!higher.length) return [];
  return [
    {
      name: `no-up-from-${floor.name.replace(/ /g, '-')}`,
      comment: `The ${floor.name} floor imports only from itself and the floors below it.`,
      severity: 'error',
      from: { path: floor.path },
      to: { path: `(${higher.join('|')})` },
    },
  ];
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Import cycles hide which module depends on which.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-unplaced-module',
      comment: 'Every module of the server lives on one floor (.dependency-cruiser.cjs).',
      severity: 'error',
      from: { path: '^(src|adapters|interactions|config|cli)/', pathNot: FLOORS.map((f) => f.path).join('|') },
      to: {},
    },
    ...upward,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '(^|/)node_modules/' },
  },
};
