#!/usr/bin/env node
// Runs the compiled CLI; `npm install` compiles src/ into lib/ (the `prepare` script).
import module from 'node:module';

// Node 22.1+ keeps compiled modules on disk between runs: a publish then spends less of its time starting.
module.enableCompileCache?.();
const { main } = await import('../lib/cli.js');

process.exitCode = await main(process.argv.slice(2));
