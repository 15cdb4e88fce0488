import type { Socket, TCPSocketListener } from "bun";

/**
 * A TCP proxy between the service and PostgreSQL, to make an outage without stopping the
 * shared server: `cut("refuse")` closes every connection and refuses new ones (a server that
 * stopped or restarts); `cut("silent")` closes every connection and accepts new ones that never
 * answer (a network that drops packets); `restore()` forwards again.
 */
export interface TcpProxy {
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  urlThrough(url: string): string;
  cut(mode: "refuse" | "silent"): void;
  restore(): void;
  close(): void;
}

interface Pair {
  upstream?: Socket<Pair>;
  client: Socket<Pair>;
  pending: Uint8Array[];
}

export function startTcpProxy(target: { host: string; port: number }): TcpProxy {
  const pairs = new Set<Pair>();
  let state: "open" | "refuse" | "silent" = "open";
  let listener: TCPSocketListener<Pair> | undefined;
  let port = 0;

  const closePair = (pair: Pair) => {
    pairs.delete(pair);
    pair.client.end();
    pair.upstream?.end();
  };

  const listen = () => {
    listener = Bun.listen<Pair>({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(client) {
          const pair: Pair = { client, pending: [] };
          client.data = pair;
          pairs.add(pair);
          if (state === "silent") return;
          void Bun.connect<Pair>({
            hostname: target.host,
            port: target.port,
            data: pair,
            socket: {
              open(upstream) {
                if (!pairs.has(pair)) return void upstream.end();
                pair.upstream = upstream;
                for (const chunk of pair.pending.splice(0)) upstream.write(chunk);
              },
              data(_upstream, chunk) {
                pair.client.write(chunk);
              },
              close() {
                if (pairs.has(pair)) closePair(pair);
              },
              error() {
                if (pairs.has(pair)) closePair(pair);
              },
            },
          }).catch(() => closePair(pair));
        },
        data(client, chunk) {
          const pair = client.data;
          if (state === "silent" || !pairs.has(pair)) return;
          if (pair.upstream) pair.upstream.write(chunk);
          else pair.pending.push(new Uint8Array(chunk));
        },
        close(client) {
          if (pairs.has(client.data)) closePair(client.data);
        },
        error(client) {
          if (pairs.has(client.data)) closePair(client.data);
        },
      },
    });
    port = listener.port;
  };
  listen();

  return {
    get port() {
      return port;
    },
    urlThrough(url) {
      const parsed = new URL(url);
      parsed.hostname = "127.0.0.1";
      parsed.port = String(port);
      return parsed.toString();
    },
    cut(mode) {
      state = mode;
      for (const pair of [...pairs]) closePair(pair);
      if (mode === "refuse") {
        listener?.stop(true);
        listener = undefined;
      }
    },
    restore() {
      // Connections accepted while silent never reached the server: drop them, as their peers would.
      for (const pair of [...pairs]) if (!pair.upstream) closePair(pair);
      state = "open";
      if (!listener) listen();
    },
    close() {
      listener?.stop(true);
      for (const pair of [...pairs]) closePair(pair);
    },
  };
}
