#!/usr/bin/env node
// Runs the compiled CLI; `npm install` compiles src/ into lib/ (the `prepare` script).
import { main } from '../lib/cli.js';

process.exitCode = await main(process.argv.slice(2));
