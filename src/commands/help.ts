// `modmirror COMMAND --help`, written from the command's declaration: the
// synopsis, then each argument and listed flag on a line of its own with its
// help beside it, then the notes. A flag declared without help cannot be
// declared at all (Flag requires it), so the help lists every flag there is.

import { listedFlags, type Command } from './args.js';

/** Help lines wrap at this width; a synopsis is kept as written. */
const WIDTH = 110;
/** Labels up to this long set the column the help starts at; a longer one has its help after two spaces. */
const LONGEST_ALIGNED = 16;

export function commandHelp(command: Command): string {
  const entries: { label: string; help: string; section?: string }[] = [
    ...(command.arguments ?? []).map(([label, help]) => ({ label, help })),
    ...listedFlags(command.options).map(([name, flag]) => ({
      label: flag.value === undefined ? `--${name}` : `--${name} ${flag.value}`,
      help: flag.help,
      ...(flag.section === undefined ? {} : { section: flag.section }),
    })),
  ];
  const aligned = entries.map((e) => e.label.length).filter((n) => n <= LONGEST_ALIGNED);
  const column = 2 + Math.max(12, ...aligned) + 2;
  const lines = [`Usage: ${command.usage}`];
  if (entries.length > 0) lines.push('');
  for (const entry of entries) {
    if (entry.section !== undefined) lines.push('', `  ${entry.section}`);
    lines.push(...described(entry.label, entry.help, column));
  }
  if (command.notes !== undefined) lines.push('', ...command.notes.split('\n').map((line) => (line === '' ? '' : `  ${line}`)));
  return lines.join('\n');
}

/** `  LABEL  help...`, the help wrapped at WIDTH and its later lines under its first. */
function described(label: string, help: string, column: number): string[] {
  const head = `  ${label}`;
  const lines: string[] = [];
  let line = head.length + 2 <= column ? head.padEnd(column) : `${head}  `;
  for (const paragraph of help.split('\n')) {
    let empty = true;
    for (const word of paragraph.split(' ')) {
      if (!empty && line.length + 1 + word.length > WIDTH) {
        lines.push(line);
        line = ' '.repeat(column);
        empty = true;
      }
      line += empty ? word : ` ${word}`;
      empty = false;
    }
    lines.push(line);
    line = ' '.repeat(column);
  }
  return lines;
}
