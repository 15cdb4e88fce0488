import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A delivered message as the SMTP server kept it: the envelope's recipients, the headers, the raw text. */
export interface Delivered {
  to: string;
  /** When the server accepted it (ms since the epoch). */
  receivedAt: number;
  headers: Map<string, string>;
  raw: string;
}

/** The real SMTP server (aiosmtpd) on 127.0.0.1, started by the test; `messages()` reads what it accepted. */
export interface SmtpSink {
  port: number;
  url: string;
  messages(): Delivered[];
  /** Replies to DATA wait until `release`; a sender that dies meanwhile has delivered nothing. */
  hold(): void;
  release(): void;
  stop(): void;
}

function parse(raw: string): Delivered {
  const [head = ""] = raw.split(/\r?\n\r?\n/, 1);
  const headers = new Map<string, string>();
  let last = "";
  for (const line of head.split(/\r?\n/)) {
    if (/^\s/.test(line) && last) headers.set(last, `${headers.get(last)} ${line.trim()}`.trim());
    else {
      const colon = line.indexOf(":");
      last = line.slice(0, colon).toLowerCase();
      headers.set(last, line.slice(colon + 1).trim());
    }
  }
  return { to: headers.get("x-envelope-to") ?? "", receivedAt: Number(headers.get("x-received-at") ?? 0) * 1000, headers, raw };
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const dir = mkdtempSync(join(tmpdir(), "smtp-sink-"));
  const child = Bun.spawn(["/usr/bin/python3", join(import.meta.dir, "smtp_sink.py"), dir], { stdout: "pipe", stderr: "inherit" });
  const reader = child.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the SMTP server (python3-aiosmtpd) did not start");
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const port = Number(text.trim());
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages: () =>
      readdirSync(dir)
        .filter((name) => name.endsWith(".eml"))
        .sort()
        .map((name) => parse(readFileSync(join(dir, name), "utf8"))),
    hold: () => writeFileSync(join(dir, "HOLD"), ""),
    release: () => rmSync(join(dir, "HOLD"), { force: true }),
    stop() {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
