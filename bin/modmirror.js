#!/usr/bin/env node
// Runs the CLI as bundled by `npm install` (the `prepare` script: src/ compiled into lib/, then bundled into lib/cli-bundle/).
import module from 'node:module';

// Node 22.1+ keeps compiled modules on disk between runs: a publish then spends less of its time starting.
module.enableCompileCache?.();
const { main } = await import('../lib/cli-bundle/cli.js');

process.exitCode = await main(process.argv.slice(2));
