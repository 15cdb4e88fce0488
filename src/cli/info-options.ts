/**
 * The options that only print something (help, version), declared once: runCli's parser reads
 * them, and src/index.ts checks them first so that it does not start compiling the embedded
 * database for a command that only prints.
 */
export const INFO_OPTIONS = {
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

export const asksOnlyForInfo = (argv: string[]): boolean =>
  argv.some((arg) => Object.entries(INFO_OPTIONS).some(([name, option]) => arg === `--${name}` || arg === `-${option.short}`));
