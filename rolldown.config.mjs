// The CLI as users run it: lib/cli.js and the libraries it loads at start
// bundled into lib/cli-bundle/, so a command reads a few files instead of a few
// hundred (a publish starts about 50 ms sooner). Commands and the libraries
// only some of them need stay in chunks of their own, loaded on first use.
// Not lib/bundle/: that is where tsc writes src/bundle/, and cleanDir empties the output folder.
import { defineConfig } from 'rolldown';

export default defineConfig({
  input: { cli: 'lib/cli.js' },
  platform: 'node',
  output: { dir: 'lib/cli-bundle', format: 'esm', cleanDir: true, sourcemap: true },
});
