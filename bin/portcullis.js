#!/usr/bin/env node
// Shim for `npx portcullis`: runs cli/portcullis.ts on a Node that strips
// TypeScript types (22.18+, 23.6+), else on the project's own Node 24
// (node_modules/.bin/node, the `node` dev dependency).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../cli/portcullis.ts', import.meta.url));

if (process.features.typescript) {
  const { run } = await import('../cli/portcullis.ts');
  process.exitCode = await run(process.argv.slice(2));
} else {
  const node = fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url));
  if (!existsSync(node)) {
    console.error(`error: portcullis needs Node.js 22.18 or newer (this is ${process.version}); run npm install for the project's own Node`);
    process.exit(1);
  }
  const child = spawnSync(node, [cli, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exitCode = child.status ?? 1;
}
