/** A webhook receiver on 127.0.0.1 (port 0) that records what it gets and answers as told. */
export interface Received {
  headers: Record<string, string>;
  body: string;
  host: string | null;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** The answers to give, in order; the last one repeats. */
  answers: { status: number; headers?: Record<string, string> }[];
  stop(): void;
}

export function startReceiver(): Receiver {
  const receiver: Receiver = {
    url: "",
    port: 0,
    received: [],
    answers: [{ status: 200 }],
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const body = await request.text();
      receiver.received.push({ headers: Object.fromEntries(request.headers), body, host: request.headers.get("host") });
      const answer = receiver.answers.length > 1 ? receiver.answers.shift()! : receiver.answers[0]!;
      return new Response("ok", { status: answer.status, headers: answer.headers });
    },
  });
  receiver.port = server.port!;
  receiver.url = `http://127.0.0.1:${server.port}/hook`;
  return receiver;
}
