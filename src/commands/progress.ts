// Progress on a terminal: one line on stderr, rewritten in place at most ten
// times a second, cleared at the end. Off for --json and when stderr is not a
// terminal (a CI log, a pipe), where the command's summary is all it prints.

export interface TerminalProgress {
  (line: string): void;
  /** Clears the line, so the summary that follows starts clean (as an empty line does). */
  done(): void;
}

const EVERY_MS = 100;

export function terminalProgress(enabled: boolean): TerminalProgress | undefined {
  if (!enabled || !process.stderr.isTTY) return undefined;
  const clear = '\r\x1b[K';
  let shown = 0;
  const show = (line: string) => {
    // A line per file of a large mirror would cost more than the work it shows.
    const now = Date.now();
    if (now - shown < EVERY_MS && line !== '') return;
    shown = now;
    process.stderr.write(`${clear}${line}`);
  };
  return Object.assign(show, { done: () => void process.stderr.write(clear) });
}
